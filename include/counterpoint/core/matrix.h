// counterpoint/core/matrix.h: the row-major float32 matrices that flow between layers.
// A MatrixView borrows memory (batch-first raw pointers, as FAISS does); a Matrix owns it.
// Embeddings are always rows: row i is the vector of item i.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace counterpoint {

struct MatrixView {
  const float* data = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;

  MatrixView() = default;
  MatrixView(const float* d, std::size_t r, std::size_t c) : data(d), rows(r), cols(c) {}
  const float* row(std::size_t i) const { return data + i * cols; }
};

class Matrix {
 public:
  Matrix() = default;
  Matrix(std::size_t rows, std::size_t cols, float fill = 0.0f)
      : rows_(rows), cols_(cols), values_(rows * cols, fill) {}
  Matrix(std::size_t rows, std::size_t cols, std::vector<float> values);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  bool empty() const { return rows_ == 0; }
  float* data() { return values_.data(); }
  const float* data() const { return values_.data(); }
  float* row(std::size_t i) { return values_.data() + i * cols_; }
  const float* row(std::size_t i) const { return values_.data() + i * cols_; }
  float& operator()(std::size_t r, std::size_t c) { return values_[r * cols_ + c]; }
  float operator()(std::size_t r, std::size_t c) const { return values_[r * cols_ + c]; }
  MatrixView view() const { return MatrixView(values_.data(), rows_, cols_); }
  operator MatrixView() const { return view(); }
  std::vector<float>& values() { return values_; }
  const std::vector<float>& values() const { return values_; }

  // Appends the rows of `other` (same width, or any width when this matrix is empty).
  void append_rows(MatrixView other);

 private:
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::vector<float> values_;
};

// Throws InvalidArgument naming `what` if any value is NaN or infinite.
void require_finite(MatrixView m, const char* what);
// Throws InvalidArgument naming `what` if m.cols != expected.
void require_width(MatrixView m, std::size_t expected, const char* what);
// L2-normalises every row in place; rows of norm 0 stay zero.
void normalize_rows(Matrix& m);

}  // namespace counterpoint
