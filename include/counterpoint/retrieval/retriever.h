// counterpoint/retrieval: two-stage search, the last room before hits leave the library.
// Stage 1 fetches K candidates per query from the dense index (cosine of E), from BM25, or
// from both fused (Relative Score Fusion or reciprocal rank fusion). Stage 2 rescores the
// candidates with the chosen scorer — cosine alone, cosine + alpha * sparsity(Es(q) - Es(p))
// (SparseCL), or a token-map score (F0 mean, F1 MaxSim, F2 alignment, a learned verifier) —
// and returns the k best as hits that carry every score component, so a user sees why a
// passage ranked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "counterpoint/core/matrix.h"
#include "counterpoint/core/progress.h"
#include "counterpoint/encoder/encoder.h"
#include "counterpoint/index/document_index.h"
#include "counterpoint/retrieval/stance.h"
#include "counterpoint/scoring/map_verifier.h"
#include "counterpoint/scoring/pooled.h"
#include "counterpoint/scoring/token_maps.h"

namespace counterpoint {
class FeatureCache;
}

namespace counterpoint::retrieval {

enum class Stage1 { kDense, kBm25, kHybrid };
enum class Fusion { kRelativeScore, kReciprocalRank };
enum class Scorer { kCosine, kSparsity, kMapMean, kMaxSim, kAlignment, kVerifier };

// Names as used by the CLI and Python: "dense"/"bm25"/"hybrid", "rsf"/"rrf",
// "cosine"/"sparsity" (or a sparsity function name: "hoyer", "l2l1", "kappa4")/"mean"/
// "maxsim"/"alignment"/"verifier". Unknown names throw InvalidArgument listing the choices.
Stage1 parse_stage1(const std::string& name);
Fusion parse_fusion(const std::string& name);
// Also sets options.sparsity.function when `name` is a sparsity function.
struct SearchOptions;
void set_scorer(SearchOptions& options, const std::string& name);
std::string to_string(Scorer scorer);
// Whether `scorer` reads token embeddings (mean, maxsim, alignment, verifier): the index must store them.
bool uses_tokens(Scorer scorer);
std::string to_string(Stage1 stage1);
std::string to_string(Fusion fusion);

// The weight alpha of the sparsity term when a caller gives none and Es records none.
inline constexpr float kDefaultAlpha = 1.0f;

struct SearchOptions {
  std::size_t k = 10;            // hits per query, >= 1
  std::size_t candidates = 100;  // K, stage-1 candidates per source; must be >= k; capped at the index size
  Stage1 stage1 = Stage1::kDense;
  Fusion fusion = Fusion::kRelativeScore;
  float fusion_lambda = 0.1f;  // RSF: fused = n(dense) + lambda * n(bm25)
  int rrf_k = 60;              // RRF: sum of 1 / (rrf_k + rank)
  Scorer scorer = Scorer::kCosine;
  // Weight of the sparsity term. Unset: the alpha Es records (tuned on dev when it was trained),
  // else kDefaultAlpha; the retriever resolves it (Retriever::alpha_for) and says which it used.
  std::optional<float> alpha;
  scoring::SparsityOptions sparsity;  // function and the identical-text guard (on by default)
  // The stance the hits should take towards each query (retrieval/stance.h): it signs the sparsity
  // term. kFromQuery reads it from each query's instruction, else attack (SparseCL's contradiction
  // search); query vectors, which carry no instruction, are searched for attack unless it is given.
  Stance stance = Stance::kFromQuery;
  scoring::AlignmentOptions alignment;
  index::SearchParams dense_params;  // efSearch / nprobe for this call
};

// K when a caller names none: the default (SearchOptions' or a command's own), or k itself when
// more hits than that are asked for (every face: Index.search, the CLI's commands, the demo).
inline std::size_t default_candidates(std::size_t k, std::size_t base = SearchOptions{}.candidates) {
  return k > base ? k : base;
}

struct Hit {
  std::string id;
  index::Slot slot = -1;
  float score = 0.0f;     // the final score the hits are sorted by
  float cosine = 0.0f;    // cos(E(q), E(p)); 0 for BM25 candidates of a query searched without E(q)
  float sparsity = 0.0f;  // sparsity(Es(q) - Es(p)); 0 unless the scorer uses it
  float bm25 = 0.0f;      // BM25 score; 0 unless BM25 took part
  float stage1 = 0.0f;    // the score stage 1 ranked by (cosine, BM25 or fused)
  float token = 0.0f;     // token-map or verifier score; 0 unless the scorer uses it
  std::string text;       // the passage as the index stores it ("" for rerank's outside candidates)
};

// Queries already encoded, for callers that cache embeddings (benchmarks, alpha tuning).
struct EncodedQueries {
  std::vector<std::string> texts;     // used by BM25
  Matrix dense;                       // rows = queries, E
  Matrix sparse;                      // rows = queries, Es (0 rows when no Es is used)
  std::vector<Matrix> tokens;         // per-token E states (empty unless a token scorer)
  std::vector<std::vector<std::string>> exclude;  // per query: ids never returned (e.g. itself)
  // Per query: what read_stance found (empty: options.stance, or attack when that is kFromQuery).
  std::vector<StanceReading> stances;
};

// The alpha a search uses, and where it came from, so that every face (CLI, Python, demo) picks
// it one way and says which: the caller's value when given, else the alpha recorded in Es's
// manifest (training.alpha, tuned on dev when Es was trained), else kDefaultAlpha.
struct AlphaChoice {
  enum class Source { kGiven, kRecorded, kDefault, kTuned };
  float value = kDefaultAlpha;
  Source source = Source::kDefault;
  std::string model;     // Es's name, when there is one
  std::string tuned_by;  // kTuned: "the interval search on dev.tsv"
  // "alpha 2.222 (recorded by sparse-default)", "alpha 1 (default: sparse-default records none)".
  std::string describe() const;
};
// InvalidArgument for a given alpha that is not finite; CorruptFile for a recorded one that is not
// a finite number.
AlphaChoice choose_alpha(std::optional<float> given, const Encoder* sparse_encoder);

// The magnitude gate tau of the sparsity term (scoring::SparsityOptions::scale) a search uses, by
// the same rule: the caller's value when given, else training.sparsity_scale in Es's manifest
// (tuned on dev beside alpha), else 0 (no gate). kDefault when no gate applies.
struct ScaleChoice {
  float value = 0.0f;
  AlphaChoice::Source source = AlphaChoice::Source::kDefault;
  std::string model;
  std::string tuned_by;
  // "" without a gate, else "scale 0.15 (recorded by sparse-default)".
  std::string describe() const;
};
// InvalidArgument for a given scale that is not finite and >= 0; CorruptFile for a recorded one.
ScaleChoice choose_sparsity_scale(std::optional<float> given, const Encoder* sparse_encoder);

// The weights of the sparsity term: "alpha 1.5 (recorded by sparse-default)", then ", scale 0.3 (...)"
// when a gate applies.
std::string describe_weights(const AlphaChoice& alpha, const ScaleChoice& scale);
// What a reader needs to reproduce a result: "scorer cosine", or for sparsity scorers
// "scorer sparsity (hoyer), alpha 1.5 (recorded by sparse-default)", and the scale when one applies.
std::string describe_scoring(const SearchOptions& options, const AlphaChoice& alpha, const ScaleChoice& scale = {});

class Retriever {
  struct Candidates;  // one query's stage-1 candidates (slots, cosines, BM25 and stage-1 scores)

 public:
  // `sparse_encoder` is needed for the sparsity scorer, `verifier` for the verifier scorer.
  Retriever(std::shared_ptr<const index::DocumentIndex> index, std::shared_ptr<const Encoder> encoder,
            std::shared_ptr<const Encoder> sparse_encoder = nullptr,
            std::shared_ptr<const scoring::MapVerifier> verifier = nullptr);

  // Encodes the queries (the encoder's query prefix, or `prefix_override`), then searches.
  std::vector<std::vector<Hit>> search(const std::vector<std::string>& queries,
                                       const SearchOptions& options,
                                       const std::string* prefix_override = nullptr) const;
  // Encodes what `options` needs: sparse rows only for the sparsity scorer, tokens only for
  // token scorers.
  // With a `cache`, pooled features it holds are reused (token states are always computed).
  EncodedQueries encode_queries(const std::vector<std::string>& queries, const SearchOptions& options,
                                const std::string* prefix_override = nullptr, FeatureCache* cache = nullptr) const;
  std::vector<std::vector<Hit>> search_encoded(const EncodedQueries& queries,
                                               const SearchOptions& options) const;

  // Stage 1's candidates for a batch of encoded queries. They depend on the queries and on the
  // stage-1 options (stage1, fusion, fusion_lambda, rrf_k, candidates, dense_params), never on the
  // scorer, alpha or scale: a caller that scores the same queries many ways (alpha tuning) finds
  // them once and rescores them, instead of repeating the dense and BM25 searches every time.
  class CandidateSet {
   public:
    std::size_t queries() const;

   private:
    friend class Retriever;
    std::shared_ptr<const std::vector<Candidates>> per_query_;  // null: default-constructed or moved from
    SearchOptions stage1_options_;
    std::uint64_t retriever_ = 0;         // Retriever::id_ of the retriever that found them
    std::uint64_t index_generation_ = 0;  // DocumentIndex::generation() when they were found
    std::uint64_t queries_ = 0;           // fingerprint of what stage 1 read: texts, E rows, exclusions
  };
  CandidateSet find_candidates(const EncodedQueries& queries, const SearchOptions& options) const;
  // Stage 2 over `candidates`: exactly search_encoded(queries, options). InvalidArgument when the
  // set holds none (default-constructed or moved from), was found by another retriever, for
  // queries whose texts, E rows or exclusions differ, before the index changed (add, remove,
  // train), or with other stage-1 options than `options`.
  std::vector<std::vector<Hit>> rescore(const EncodedQueries& queries, const CandidateSet& candidates,
                                        const SearchOptions& options) const;

  // The alpha a search with `options` uses and where it came from (choose_alpha over this
  // retriever's Es): the faces print or return it beside the hits.
  AlphaChoice alpha_for(const SearchOptions& options) const;
  // The sparsity scale (tau) likewise (choose_sparsity_scale).
  ScaleChoice scale_for(const SearchOptions& options) const;

  const index::DocumentIndex& index() const { return *index_; }
  const Encoder* encoder() const { return encoder_.get(); }
  const Encoder* sparse_encoder() const { return sparse_encoder_.get(); }
  const scoring::MapVerifier* verifier() const { return verifier_.get(); }

 private:
  Candidates stage1(const EncodedQueries& queries, std::size_t q, const SearchOptions& options,
                    const index::SearchResult* dense) const;
  std::vector<Hit> stage2(const EncodedQueries& queries, std::size_t q, const Candidates& candidates,
                          const SearchOptions& options, float alpha, const scoring::SparsityOptions& sparsity) const;
  // Both stages over every query, unchecked: search_encoded, find_candidates and rescore validate first.
  std::vector<Candidates> stage1_all(const EncodedQueries& queries, const SearchOptions& options) const;
  std::vector<std::vector<Hit>> stage2_all(const EncodedQueries& queries, const std::vector<Candidates>& per_query,
                                           const SearchOptions& options, float alpha,
                                           const scoring::SparsityOptions& sparsity) const;
  // The alpha and sparsity options stage 2 scores with: alpha_for and scale_for for a sparsity
  // scorer (throwing for a bad one), else 0 and the options as given.
  std::pair<float, scoring::SparsityOptions> stage2_weights(const SearchOptions& options) const;
  void validate(const EncodedQueries& queries, const SearchOptions& options) const;

  std::uint64_t id_;  // unique in the process: tells CandidateSets of different retrievers apart
  std::shared_ptr<const index::DocumentIndex> index_;
  std::shared_ptr<const Encoder> encoder_;
  std::shared_ptr<const Encoder> sparse_encoder_;
  std::shared_ptr<const scoring::MapVerifier> verifier_;
};



// InvalidArgument when `encoder` or `sparse_encoder` (either may be null) is not the model
// `index` records or produces another width than the rows it stores (token rows included), or
// when a sparse encoder is given for an index without Es. Every face (CLI, Python) runs this one
// check when it opens an index with encoders.
void check_encoders(const index::DocumentIndex& index, const Encoder* encoder, const Encoder* sparse_encoder);

// InvalidArgument for a weight no search can use (a non-finite alpha, a negative or non-finite
// fusion_lambda, a sparsity scale out of range) and for settings that would change nothing: a
// non-zero alpha or sparsity scale, a stance other than kFromQuery or the identical guard turned
// off with a scorer without a sparsity term; a fusion, fusion_lambda or rrf_k moved from its
// default where no hybrid stage 1 (or no fusion of that kind) reads it. Every search checks them;
// faces call it to refuse them before any model loads.
void validate_settings(const SearchOptions& options);
// validate_settings and the depth of a search: k >= 1 and candidates >= k. A workflow that
// states its own depth rule in its terms (the hits its metrics need) checks the settings alone.
void validate_search(const SearchOptions& options);

// Options for an index of `encoder`'s rows (and `sparse_encoder`'s Es when given; with `tokens`,
// its token embeddings for the token scorers): widths and the encoders' identities set,
// everything else at its default.
index::IndexOptions index_options_for(const Encoder& encoder, const Encoder* sparse_encoder = nullptr,
                                      bool tokens = false);

// Retriever::encode_queries without an index, for a stage 1 run elsewhere (a Milvus collection, a
// user's own store, then rerank): E reads each whole query, Es (needed by a sparsity scorer) the
// claim read_stance(query, options.stance) finds, and `stances` records every reading.
// InvalidArgument for a sparsity scorer without `sparse_encoder`.
EncodedQueries encode_queries(const Encoder& encoder, const Encoder* sparse_encoder,
                              const std::vector<std::string>& queries, const SearchOptions& options,
                              const std::string* prefix_override = nullptr, FeatureCache* cache = nullptr);

// Candidates found by another store (a Milvus collection, a user's own ANN index) for one query,
// in the order that store ranked them: their ids, their stage-1 score (cosine to the query) and,
// for a sparsity scorer, their Es rows (row-major, one per candidate, float32 or float16 bits).
struct CandidateRows {
  std::vector<std::string> ids;
  // Empty, or one per id: each hit then carries its passage (Hit::text), as the index's hits do.
  std::vector<std::string> texts;
  std::vector<float> stage1;
  const float* sparse = nullptr;
  const std::uint16_t* sparse_f16 = nullptr;
  std::size_t sparse_dim = 0;
};

// Stage 2 alone, over candidates found elsewhere: the same scores, order and ties as
// Retriever::search (cosine or cos +/- alpha * sparsity; ties keep the candidates' order), the
// ids in `exclude` dropped, the best options.k returned. `sparse_query` is Es(q) (sparse_dim
// floats) for a sparsity scorer, of the claim read_stance(query, options.stance) found, whose
// stance `stance` is (kFromQuery: options.stance, else attack); alpha and the scale are resolved by choose_alpha(options.alpha,
// sparse_encoder) and choose_sparsity_scale(options.sparsity.scale, sparse_encoder). InvalidArgument for a scorer other than cosine or sparsity, mismatched
// lengths, missing or non-finite rows.
std::vector<Hit> rerank(const CandidateRows& candidates, const float* sparse_query, const SearchOptions& options,
                        const Encoder* sparse_encoder = nullptr, const std::vector<std::string>& exclude = {},
                        Stance stance = Stance::kFromQuery);

// Documents encoded per step of add_documents (the unit of progress; texts are length-sorted within
// a step, so larger steps pad less): the default of every face that indexes a corpus.
inline constexpr std::size_t kDocumentsPerStep = 256;

// Encodes documents (texts, then their ids) with E (and Es when given) and adds them to `index` in batches,
// reporting (documents done, total) through `progress`. An encoder other than the one the
// index records throws InvalidArgument before anything is added. With a `cache`, pooled
// features of texts it holds are reused and the others kept there (token rows are never cached).
void add_documents(index::DocumentIndex& index, const std::vector<std::string>& texts,
                   const std::vector<std::string>& ids, const Encoder& encoder,
                   const Encoder* sparse_encoder, std::size_t batch_size = kDocumentsPerStep,
                   const ProgressCallback& progress = {}, FeatureCache* cache = nullptr);

}  // namespace counterpoint::retrieval
