// Encodes three sentences with an installed model and prints their cosine similarities:
// the smallest program that links counterpoint from an application.
#include <counterpoint/core/errors.h>
#include <counterpoint/encoder/encoder.h>
#include <counterpoint/scoring/pooled.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " MODEL\n"
              << "  MODEL: an installed model's name (all-minilm-l6-v2, as in Python) or a model folder\n";
    return 2;
  }
  try {
    auto encoder = counterpoint::Encoder::load(argv[1]);
    std::cout << "model " << encoder->manifest().name << " from " << encoder->directory() << "\n";
    const auto embeddings = encoder->encode({"The cat sleeps on the mat.", "A cat is sleeping on the mat.",
                                             "Stock markets fell sharply today."});
    std::vector<float> scores(embeddings.rows());
    counterpoint::scoring::cosine_scores(counterpoint::MatrixView(embeddings.row(0), 1, embeddings.cols()),
                                         embeddings, scores.data());
    for (std::size_t i = 0; i < scores.size(); ++i) std::cout << "cos(0, " << i << ") = " << scores[i] << "\n";
    if (!(scores[1] > scores[2])) {
      std::cerr << "unexpected: the paraphrase is not closer than the unrelated sentence\n";
      return 1;
    }
  } catch (const counterpoint::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
