#include "counterpoint/core/matrix.h"

#include <cmath>
#include <string>

#include "counterpoint/core/errors.h"

namespace counterpoint {

Matrix::Matrix(std::size_t rows, std::size_t cols, std::vector<float> values)
    : rows_(rows), cols_(cols), values_(std::move(values)) {
  if (values_.size() != rows_ * cols_) {
    throw InvalidArgument("Matrix: " + std::to_string(values_.size()) + " values for a " +
                          std::to_string(rows_) + " x " + std::to_string(cols_) + " matrix");
  }
}

void Matrix::append_rows(MatrixView other) {
  if (other.rows == 0) return;
  if (rows_ == 0 && values_.empty()) cols_ = other.cols;
  require_width(other, cols_, "appended rows");
  values_.insert(values_.end(), other.data, other.data + other.rows * other.cols);
  rows_ += other.rows;
}

void require_finite(MatrixView m, const char* what) {
  const std::size_t n = m.rows * m.cols;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(m.data[i])) {
      throw InvalidArgument(std::string(what) + ": value at row " + std::to_string(i / m.cols) +
                            ", column " + std::to_string(i % m.cols) + " is not finite (" +
                            std::to_string(m.data[i]) + ")");
    }
  }
}

void require_width(MatrixView m, std::size_t expected, const char* what) {
  if (m.cols != expected) {
    throw InvalidArgument(std::string(what) + ": expected width " + std::to_string(expected) +
                          ", got " + std::to_string(m.cols));
  }
}

void normalize_rows(Matrix& m) {
  for (std::size_t r = 0; r < m.rows(); ++r) {
    float* row = m.row(r);
    double sq = 0.0;
    for (std::size_t c = 0; c < m.cols(); ++c) sq += double(row[c]) * row[c];
    if (sq == 0.0) continue;
    const float inv = float(1.0 / std::sqrt(sq));
    for (std::size_t c = 0; c < m.cols(); ++c) row[c] *= inv;
  }
}

}  // namespace counterpoint
