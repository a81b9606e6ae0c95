#include "counterpoint/retrieval/retriever.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <tuple>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "counterpoint/core/errors.h"
#include "counterpoint/core/spelling.h"
#include "counterpoint/encoder/feature_cache.h"

namespace counterpoint::retrieval {

Stage1 parse_stage1(const std::string& typed) {
  const std::string name = ascii_lower(typed);
  if (name == "dense") return Stage1::kDense;
  if (name == "bm25") return Stage1::kBm25;
  if (name == "hybrid") return Stage1::kHybrid;
  throw InvalidArgument("unknown stage-1 source '" + typed + "' (expected dense, bm25 or hybrid)" +
                        did_you_mean(typed, {"dense", "bm25", "hybrid"}));
}

Fusion parse_fusion(const std::string& typed) {
  const std::string name = ascii_lower(typed);
  if (name == "rsf") return Fusion::kRelativeScore;
  if (name == "rrf") return Fusion::kReciprocalRank;
  throw InvalidArgument("unknown fusion '" + typed + "' (expected rsf or rrf)");
}

std::string to_string(Stage1 stage1) {
  switch (stage1) {
    case Stage1::kDense: return "dense";
    case Stage1::kBm25: return "bm25";
    case Stage1::kHybrid: return "hybrid";
  }
  return "dense";
}

std::string to_string(Fusion fusion) { return fusion == Fusion::kRelativeScore ? "rsf" : "rrf"; }

void set_scorer(SearchOptions& options, const std::string& typed) {
  const std::string name = ascii_lower(typed);
  if (name == "cosine") { options.scorer = Scorer::kCosine; return; }
  if (name == "sparsity") { options.scorer = Scorer::kSparsity; return; }
  if (name == "hoyer" || name == "l2l1" || name == "kappa4") {
    options.scorer = Scorer::kSparsity;
    options.sparsity.function = scoring::parse_sparsity(name);
    return;
  }
  if (name == "mean") { options.scorer = Scorer::kMapMean; return; }
  if (name == "maxsim") { options.scorer = Scorer::kMaxSim; return; }
  if (name == "alignment") { options.scorer = Scorer::kAlignment; return; }
  if (name == "verifier") { options.scorer = Scorer::kVerifier; return; }
  throw InvalidArgument("unknown scorer '" + typed +
                        "' (expected cosine, hoyer, l2l1, kappa4, sparsity, mean, maxsim, alignment or verifier)" +
                        did_you_mean(typed, {"cosine", "hoyer", "l2l1", "kappa4", "sparsity", "mean", "maxsim",
                                             "alignment", "verifier"}));
}

std::string to_string(Scorer scorer) {
  switch (scorer) {
    case Scorer::kCosine: return "cosine";
    case Scorer::kSparsity: return "sparsity";
    case Scorer::kMapMean: return "mean";
    case Scorer::kMaxSim: return "maxsim";
    case Scorer::kAlignment: return "alignment";
    case Scorer::kVerifier: return "verifier";
  }
  return "cosine";
}

namespace {

// An index that records the model its rows came from only accepts that model (Encoder::identity_mismatch:
// the same weights read with the same settings), and says which setting differs.
void require_recorded_encoder(const std::string& recorded, const std::string& recorded_settings, const Encoder* encoder,
                              const std::string& what) {
  if (recorded.empty() || encoder == nullptr) return;
  const std::string why = encoder->identity_mismatch(recorded, recorded_settings);
  if (why.empty()) return;
  throw InvalidArgument(what + " " + encoder->identity() + " is not the model the index was built with (" + recorded +
                        "): " + why + "; search with that model or rebuild the index");
}

}  // namespace

bool uses_tokens(Scorer s) {
  return s == Scorer::kMapMean || s == Scorer::kMaxSim || s == Scorer::kAlignment || s == Scorer::kVerifier;
}

namespace {

// Min-max normalisation of one score list, as Relative Score Fusion defines it.
std::vector<float> min_max(const std::vector<float>& scores) {
  if (scores.empty()) return {};
  const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  const float low = *lo, range = *hi - *lo;
  std::vector<float> out(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i) out[i] = (scores[i] - low) / (range + 1e-8f);
  return out;
}

// Stage 2's one ordering rule: the best `k` by final score, ties by `tie` ascending (the slot for
// the index's own candidates, the position for candidates found elsewhere); `hit(i)` assembles
// candidate i's components and the score is set here.
template <typename MakeHit>
std::vector<Hit> ranked_hits(const std::vector<float>& final_score, const std::vector<std::int64_t>& tie,
                             std::size_t k, MakeHit hit) {
  const std::size_t n = final_score.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  const std::size_t keep = std::min(k, n);
  std::partial_sort(order.begin(), order.begin() + keep, order.end(), [&](std::size_t a, std::size_t b) {
    if (final_score[a] != final_score[b]) return final_score[a] > final_score[b];
    return tie[a] < tie[b];
  });
  std::vector<Hit> hits;
  hits.reserve(keep);
  for (std::size_t r = 0; r < keep; ++r) {
    Hit h = hit(order[r]);
    h.score = final_score[order[r]];
    hits.push_back(std::move(h));
  }
  return hits;
}

}  // namespace

struct Retriever::Candidates {
  std::vector<index::Slot> slots;
  std::vector<float> cosine;
  std::vector<float> bm25;
  std::vector<float> stage1;
};

namespace {

std::uint64_t next_retriever_id() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

// FNV-1a over everything stage 1 reads from the queries, so rescore can tell other queries from
// these (a copy of them passes).
std::uint64_t stage1_fingerprint(const EncodedQueries& queries) {
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  const auto mix_size = [&mix](std::size_t n) { mix(&n, sizeof n); };
  const auto mix_text = [&](const std::string& t) {
    mix_size(t.size());
    mix(t.data(), t.size());
  };
  mix_size(queries.texts.size());
  for (const auto& t : queries.texts) mix_text(t);
  mix_size(queries.dense.rows());
  mix_size(queries.dense.cols());
  mix(queries.dense.data(), queries.dense.rows() * queries.dense.cols() * sizeof(float));
  mix_size(queries.exclude.size());
  for (const auto& ids : queries.exclude) {
    mix_size(ids.size());
    for (const auto& id : ids) mix_text(id);
  }
  return h;
}

}  // namespace

Retriever::Retriever(std::shared_ptr<const index::DocumentIndex> index, std::shared_ptr<const Encoder> encoder,
                     std::shared_ptr<const Encoder> sparse_encoder,
                     std::shared_ptr<const scoring::MapVerifier> verifier)
    : id_(next_retriever_id()),
      index_(std::move(index)),
      encoder_(std::move(encoder)),
      sparse_encoder_(std::move(sparse_encoder)),
      verifier_(std::move(verifier)) {
  if (!index_) throw InvalidArgument("Retriever: index is null");
  check_encoders(*index_, encoder_.get(), sparse_encoder_.get());
}

EncodedQueries Retriever::encode_queries(const std::vector<std::string>& queries, const SearchOptions& options,
                                         const std::string* prefix_override, FeatureCache* cache) const {
  if (!encoder_) {
    throw InvalidArgument("no encoder to encode query texts (the index was made or loaded without one): search with "
                          "query vectors, or give the encoder the index was built with");
  }
  return retrieval::encode_queries(*encoder_, sparse_encoder_.get(), queries, options, prefix_override, cache);
}

EncodedQueries encode_queries(const Encoder& encoder, const Encoder* sparse_encoder,
                              const std::vector<std::string>& queries, const SearchOptions& options,
                              const std::string* prefix_override, FeatureCache* cache) {
  EncodeOptions encode;
  encode.role = TextRole::kQuery;
  encode.prefix_override = prefix_override;
  EncodedQueries out;
  out.texts = queries;
  // The stance is read from what E reads: a prefix given for these queries (a stance instruction,
  // say) and the query. Es reads each claim, without the instruction and so without that prefix.
  std::vector<std::string> claims;
  bool any_instruction = false;
  for (const auto& query : queries) {
    out.stances.push_back(read_stance(prefix_override ? *prefix_override + query : query, options.stance));
    claims.push_back(out.stances.back().claim);
    any_instruction = any_instruction || out.stances.back().from_instruction;
  }
  if (options.scorer == Scorer::kSparsity) {
    if (!sparse_encoder) throw InvalidArgument("the sparsity scorer needs a sparse-aware encoder (Es)");
    if (!any_instruction) {
      // One forward pass when Es is a head over E's network.
      std::tie(out.dense, out.sparse) = cache ? cache->encode_both(encoder, *sparse_encoder, queries, encode)
                                              : Encoder::encode_both(encoder, *sparse_encoder, queries, encode);
    } else {
      const std::string no_prefix;  // a given prefix is inside the claims already (or was the instruction)
      EncodeOptions claim_encode = encode;
      if (prefix_override) claim_encode.prefix_override = &no_prefix;
      out.dense = cache ? cache->encode(encoder, queries, encode) : encoder.encode(queries, encode);
      out.sparse = cache ? cache->encode(*sparse_encoder, claims, claim_encode)
                         : sparse_encoder->encode(claims, claim_encode);
    }
  } else {
    out.dense = cache ? cache->encode(encoder, queries, encode) : encoder.encode(queries, encode);
  }
  if (uses_tokens(options.scorer)) out.tokens = encoder.encode_tokens(queries, encode);
  return out;
}

std::vector<std::vector<Hit>> Retriever::search(const std::vector<std::string>& queries,
                                                const SearchOptions& options,
                                                const std::string* prefix_override) const {
  return search_encoded(encode_queries(queries, options, prefix_override), options);
}

void validate_settings(const SearchOptions& options) {
  choose_alpha(options.alpha, nullptr);  // a given alpha's range
  if (!(options.fusion_lambda >= 0) || !std::isfinite(options.fusion_lambda)) {
    throw InvalidArgument("fusion_lambda must be finite and >= 0 (the weight of BM25 beside the dense score)");
  }
  choose_sparsity_scale(options.sparsity.scale, nullptr);  // a given scale's range
  // The fusion settings shape the hybrid stage 1 only, each under its own fusion; one moved from
  // its default elsewhere would change nothing (dense results where the user asked for BM25 too).
  const SearchOptions defaults;
  const bool hybrid = options.stage1 == Stage1::kHybrid;
  const std::string fuses = "stage1 '" + to_string(options.stage1) + "' fuses nothing: choose stage1 hybrid, or ";
  if (!hybrid && options.fusion != defaults.fusion) {
    throw InvalidArgument("fusion '" + to_string(options.fusion) + "' fuses the hybrid stage 1, and " + fuses +
                          "leave fusion out");
  }
  if (options.fusion_lambda != defaults.fusion_lambda && (!hybrid || options.fusion != Fusion::kRelativeScore)) {
    throw InvalidArgument("fusion_lambda weighs BM25 in a hybrid stage 1 fused by rsf, and " +
                          (hybrid ? std::string("this one is fused by rrf: choose fusion rsf, or ") : fuses) +
                          "leave fusion_lambda out");
  }
  if (options.rrf_k != defaults.rrf_k && (!hybrid || options.fusion != Fusion::kReciprocalRank)) {
    throw InvalidArgument("rrf_k ranks a hybrid stage 1 fused by rrf, and " +
                          (hybrid ? std::string("this one is fused by rsf: choose fusion rrf, or ") : fuses) +
                          "leave rrf_k out");
  }
  // Stage 2 adds alpha * sparsity to the stage-1 score, which alpha is tuned against: a cosine, or
  // a fused score of min-max normalised parts. BM25 alone is unbounded (tens on a short corpus),
  // so the term would barely move its order: a sparsity search that ranks by BM25 in all but name.
  if (options.scorer == Scorer::kSparsity && options.stage1 == Stage1::kBm25) {
    throw InvalidArgument("the sparsity term is added to the stage-1 score, and stage1 'bm25' scores by raw BM25 "
                          "(unbounded, where alpha is tuned against a cosine): choose stage1 dense, or hybrid for "
                          "BM25 beside the dense score");
  }
  // alpha, the scale and the stance shape the sparsity term only: under another scorer they would
  // change nothing, and a user who set one expects it to (a silently cosine-only result). alpha 0
  // and scale 0 (no term, no gate) say what such a scorer does, so sweeps from alpha 0 stay valid.
  if (options.scorer == Scorer::kSparsity) return;
  const std::string scorer = "scorer '" + to_string(options.scorer) + "' has no sparsity term";
  const std::string choose = ": choose hoyer, l2l1 or kappa4, or leave it out";
  if (options.alpha.value_or(0.0f) != 0.0f) throw InvalidArgument("alpha weighs the sparsity term and " + scorer + choose);
  if (options.sparsity.scale.value_or(0.0f) != 0.0f) {
    throw InvalidArgument("sparsity scale gates the sparsity term and " + scorer + choose);
  }
  if (options.stance != Stance::kFromQuery) {
    throw InvalidArgument("stance '" + to_string(options.stance) + "' signs the sparsity term and " + scorer + choose);
  }
  if (options.sparsity.identical_guard != defaults.sparsity.identical_guard) {
    throw InvalidArgument("turning the identical guard off changes the sparsity term only, and " + scorer +
                          ": choose hoyer, l2l1 or kappa4, or keep the guard");
  }
}

void validate_search(const SearchOptions& options) {
  if (options.k == 0) throw InvalidArgument("k must be >= 1");
  if (options.candidates < options.k) {
    throw InvalidArgument("candidates (K = " + std::to_string(options.candidates) +
                          ") must be >= k (" + std::to_string(options.k) + ")");
  }
  validate_settings(options);
}

void Retriever::validate(const EncodedQueries& queries, const SearchOptions& options) const {
  validate_search(options);
  const std::size_t n = options.stage1 == Stage1::kBm25 ? queries.texts.size() : queries.dense.rows();
  if (options.stage1 != Stage1::kBm25 || queries.dense.rows() > 0) {  // BM25 hits read E(q) for their cosine
    require_width(queries.dense, index_->options().dim, "query embeddings");
    require_finite(queries.dense, "query embeddings");
  }
  if (!queries.stances.empty() && queries.stances.size() != n) {
    throw InvalidArgument(std::to_string(queries.stances.size()) + " stance readings for " + std::to_string(n) +
                          " queries (give one per query, or none)");
  }
  if (options.stage1 != Stage1::kDense && queries.texts.size() != n) {
    throw InvalidArgument("BM25 needs the query texts: " + std::to_string(queries.texts.size()) +
                          " texts for " + std::to_string(n) + " queries");
  }
  if (options.scorer == Scorer::kSparsity) {
    if (index_->options().sparse_dim == 0) {
      throw InvalidArgument("the sparsity scorer needs an index that stores sparse-aware embeddings (Es)");
    }
    if (queries.sparse.rows() != n) {
      throw InvalidArgument("the sparsity scorer needs one Es row per query: got " +
                            std::to_string(queries.sparse.rows()) + " for " + std::to_string(n) + " queries");
    }
    require_width(queries.sparse, index_->options().sparse_dim, "query Es embeddings");
    require_finite(queries.sparse, "query Es embeddings");
  }
  if (uses_tokens(options.scorer)) {
    if (!index_->options().store_token_embeddings) {
      throw InvalidArgument("scorer '" + to_string(options.scorer) +
                            "' needs an index built with token embeddings");
    }
    if (queries.tokens.size() != n) throw InvalidArgument("token scorers need the query token embeddings");
  }
  if (options.scorer == Scorer::kVerifier && !verifier_) {
    throw InvalidArgument("the verifier scorer needs a verifier model");
  }
  if (!queries.exclude.empty() && queries.exclude.size() != n) {
    throw InvalidArgument("exclude lists: " + std::to_string(queries.exclude.size()) + " for " +
                          std::to_string(n) + " queries");
  }
}

Retriever::Candidates Retriever::stage1(const EncodedQueries& queries, std::size_t q,
                                        const SearchOptions& options, const index::SearchResult* dense) const {
  std::unordered_set<std::string> excluded;
  if (!queries.exclude.empty()) excluded.insert(queries.exclude[q].begin(), queries.exclude[q].end());

  std::vector<index::Slot> dense_list, bm25_list;
  std::vector<float> dense_scores;
  if (dense) {
    for (std::size_t r = 0; r < dense->k && dense_list.size() < options.candidates; ++r) {
      const index::Slot s = dense->slot(q, r);
      if (s < 0 || (!excluded.empty() && excluded.count(index_->id(s)))) continue;
      dense_list.push_back(s);
      dense_scores.push_back(dense->score(q, r));
    }
  }
  if (options.stage1 != Stage1::kDense) {
    for (const auto& hit :
         index_->search_bm25(queries.texts[q], std::min(options.candidates, index_->size()) + excluded.size())) {
      if (!excluded.count(index_->id(hit.slot))) bm25_list.push_back(hit.slot);
    }
    if (bm25_list.size() > options.candidates) bm25_list.resize(options.candidates);
  }

  Candidates c;
  std::unordered_map<index::Slot, std::size_t> position;
  if (options.stage1 == Stage1::kDense) {
    c.slots = dense_list;  // one list: nothing to merge
  } else {
    for (const auto* list : {&dense_list, &bm25_list}) {
      for (index::Slot s : *list) {
        if (position.emplace(s, c.slots.size()).second) c.slots.push_back(s);
      }
    }
  }
  const std::size_t n = c.slots.size();
  const std::size_t dim = index_->options().dim;
  c.cosine.assign(n, 0.0f);
  if (options.stage1 == Stage1::kDense && dense->scores_are_cosines) {
    // Dense candidates of an exact scan: their scores are the cosines, so the K rows are not read
    // again; clamped as cosine_scores clamps them (two unit rows' float sum can pass 1 by a rounding).
    c.cosine = std::move(dense_scores);
    for (float& cosine : c.cosine) cosine = std::clamp(cosine, -1.0f, 1.0f);
  } else if (n > 0 && q < queries.dense.rows()) {
    // Hybrid candidates, and BM25 ones of a query encoded by E: each hit reports its true cosine.
    std::vector<float> rows(n * dim);
    index_->gather_dense(c.slots.data(), n, rows.data());
    scoring::cosine_scores(MatrixView(queries.dense.row(q), 1, dim), MatrixView(rows.data(), n, dim),
                           c.cosine.data());
  }
  if (options.stage1 != Stage1::kDense) c.bm25 = index_->score_bm25(queries.texts[q], c.slots);
  else c.bm25.assign(n, 0.0f);

  switch (options.stage1) {
    case Stage1::kDense: c.stage1 = c.cosine; break;
    case Stage1::kBm25: c.stage1 = c.bm25; break;
    case Stage1::kHybrid:
      c.stage1.assign(n, 0.0f);
      if (options.fusion == Fusion::kRelativeScore) {
        const auto nd = min_max(c.cosine), nb = min_max(c.bm25);
        for (std::size_t i = 0; i < n; ++i) c.stage1[i] = nd[i] + options.fusion_lambda * nb[i];
      } else {
        for (const auto* list : {&dense_list, &bm25_list}) {
          for (std::size_t rank = 0; rank < list->size(); ++rank) {
            c.stage1[position[(*list)[rank]]] += 1.0f / float(options.rrf_k + rank + 1);
          }
        }
      }
      break;
  }
  return c;
}

std::vector<Hit> Retriever::stage2(const EncodedQueries& queries, std::size_t q, const Candidates& c,
                                   const SearchOptions& options, float alpha,
                                   const scoring::SparsityOptions& sparsity_options) const {
  const std::size_t n = c.slots.size();
  std::vector<float> sparsity(n, 0.0f), token(n, 0.0f), final_score = c.stage1;
  if (options.scorer == Scorer::kSparsity && n > 0) {
    // The candidates' Es rows are scored where the index keeps them (float16 widened in registers).
    const MatrixView query(queries.sparse.row(q), 1, index_->options().sparse_dim);
    index_->with_sparse_table(c.slots.data(), n, [&](const index::DocumentIndex::SparseTable& table) {
      if (table.f16 != nullptr) {
        scoring::sparsity_scores_gather_f16(query, table.f16, table.rows, c.slots.data(), n, sparsity_options,
                                            sparsity.data());
      } else {
        scoring::sparsity_scores_gather(query, table.f32, table.rows, c.slots.data(), n, sparsity_options,
                                        sparsity.data());
      }
    });
    const Stance read = q < queries.stances.size() ? queries.stances[q].stance : Stance::kFromQuery;
    scoring::final_scores(c.stage1.data(), sparsity.data(), n, alpha,
                          sparsity_direction(resolve_stance(read, options.stance)), sparsity_options,
                          final_score.data());
  } else if (uses_tokens(options.scorer) && n > 0) {
    std::vector<Matrix> maps;
    maps.reserve(n);
    for (index::Slot s : c.slots) maps.push_back(scoring::token_cosine_map(queries.tokens[q], index_->token_embeddings(s)));
    if (options.scorer == Scorer::kVerifier) {
      token = verifier_->score(maps);
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        token[i] = options.scorer == Scorer::kMapMean   ? scoring::map_mean(maps[i])
                   : options.scorer == Scorer::kMaxSim ? scoring::map_maxsim(maps[i])
                                                       : scoring::map_alignment(maps[i], options.alignment);
      }
    }
    final_score = token;
  }

  return ranked_hits(final_score, std::vector<std::int64_t>(c.slots.begin(), c.slots.end()), options.k,
                     [&](std::size_t i) {
                       Hit h;
                       h.slot = c.slots[i];
                       h.id = index_->id(h.slot);
                       h.text = index_->text(h.slot);
                       h.cosine = c.cosine[i];
                       h.sparsity = sparsity[i];
                       h.bm25 = c.bm25[i];
                       h.stage1 = c.stage1[i];
                       h.token = token[i];
                       return h;
                     });
}

std::vector<std::vector<Hit>> Retriever::search_encoded(const EncodedQueries& queries,
                                                        const SearchOptions& options) const {
  validate(queries, options);
  const auto [alpha, sparsity] = stage2_weights(options);  // a bad alpha or scale is reported before stage 1
  return stage2_all(queries, stage1_all(queries, options), options, alpha, sparsity);
}

namespace {

// Runs body(q) for every query: one query on the calling thread outside any parallel region (an
// inactive region around it, `parallel if (n > 1)`, would make stage 2's own team a nested one,
// started afresh on every call: 4.0 ms against 0.9 ms serial for one ArguAna query at K = 1,000),
// more over OpenMP's threads. Queries are independent and the index is safe for concurrent reads;
// the first failure is re-thrown once all workers stop.
template <typename Body>
void for_each_query(std::size_t n, const Body& body) {
  if (n == 0) return;
  if (n == 1) {
    body(0);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
#pragma omp parallel for schedule(dynamic)
  for (std::size_t q = 0; q < n; ++q) {
    try {
      body(q);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

bool same_stage1(const SearchOptions& a, const SearchOptions& b) {
  return a.stage1 == b.stage1 && a.candidates == b.candidates &&
         (a.stage1 != Stage1::kHybrid ||
          (a.fusion == b.fusion && a.fusion_lambda == b.fusion_lambda && a.rrf_k == b.rrf_k)) &&
         a.dense_params.ef_search == b.dense_params.ef_search && a.dense_params.nprobe == b.dense_params.nprobe;
}

}  // namespace

std::size_t Retriever::CandidateSet::queries() const { return per_query_ ? per_query_->size() : 0; }

std::pair<float, scoring::SparsityOptions> Retriever::stage2_weights(const SearchOptions& options) const {
  scoring::SparsityOptions sparsity = options.sparsity;
  if (options.scorer != Scorer::kSparsity) return {0.0f, sparsity};
  const float alpha = alpha_for(options).value;
  sparsity.scale = scale_for(options).value;
  return {alpha, sparsity};
}

std::vector<Retriever::Candidates> Retriever::stage1_all(const EncodedQueries& queries,
                                                         const SearchOptions& options) const {
  const std::size_t n = options.stage1 == Stage1::kBm25 ? queries.texts.size() : queries.dense.rows();
  std::vector<Candidates> per_query(n);
  if (n == 0 || index_->size() == 0) return per_query;
  std::size_t most_excluded = 0;
  for (const auto& e : queries.exclude) most_excluded = std::max(most_excluded, e.size());
  index::SearchResult dense;
  const bool use_dense = options.stage1 != Stage1::kBm25;
  // More candidates than live documents cannot be found: capping K at the index size keeps a
  // huge `candidates` from allocating candidates x queries result slots (1e9 took 12 GB).
  const std::size_t depth = std::min(options.candidates, index_->size()) + most_excluded;
  if (use_dense) dense = index_->search(queries.dense, depth, options.dense_params);
  for_each_query(n, [&](std::size_t q) { per_query[q] = stage1(queries, q, options, use_dense ? &dense : nullptr); });
  return per_query;
}

std::vector<std::vector<Hit>> Retriever::stage2_all(const EncodedQueries& queries,
                                                    const std::vector<Candidates>& per_query,
                                                    const SearchOptions& options, float alpha,
                                                    const scoring::SparsityOptions& sparsity) const {
  std::vector<std::vector<Hit>> results(per_query.size());
  if (index_->size() == 0) return results;
  for_each_query(per_query.size(),
                 [&](std::size_t q) { results[q] = stage2(queries, q, per_query[q], options, alpha, sparsity); });
  return results;
}

Retriever::CandidateSet Retriever::find_candidates(const EncodedQueries& queries, const SearchOptions& options) const {
  validate(queries, options);
  CandidateSet set;
  set.stage1_options_ = options;
  set.retriever_ = id_;
  // Read before the search: an add or remove while it runs leaves the set stale, never current.
  set.index_generation_ = index_->generation();
  set.queries_ = stage1_fingerprint(queries);
  set.per_query_ = std::make_shared<const std::vector<Candidates>>(stage1_all(queries, options));
  return set;
}

std::vector<std::vector<Hit>> Retriever::rescore(const EncodedQueries& queries, const CandidateSet& candidates,
                                                 const SearchOptions& options) const {
  if (!candidates.per_query_) {
    throw InvalidArgument("rescore: the candidate set holds no candidates (default-constructed or moved from); "
                          "call find_candidates");
  }
  if (candidates.retriever_ != id_) {
    throw InvalidArgument("rescore: these candidates were found by another retriever; call find_candidates on this one");
  }
  if (candidates.queries_ != stage1_fingerprint(queries)) {
    throw InvalidArgument("rescore: these candidates were found for other queries (their texts, E rows or "
                          "exclusions differ); find them again");
  }
  if (candidates.index_generation_ != index_->generation()) {
    throw InvalidArgument("rescore: the index changed (add, remove or train) since these candidates were found; "
                          "find them again");
  }
  if (!same_stage1(candidates.stage1_options_, options)) {
    throw InvalidArgument("rescore: the candidates were found with other stage-1 options (stage1, fusion, "
                          "fusion_lambda, rrf_k, candidates, ef_search, nprobe) than these; find them again");
  }
  validate(queries, options);
  const auto [alpha, sparsity] = stage2_weights(options);
  return stage2_all(queries, *candidates.per_query_, options, alpha, sparsity);
}

AlphaChoice Retriever::alpha_for(const SearchOptions& options) const {
  return choose_alpha(options.alpha, sparse_encoder_.get());
}

ScaleChoice Retriever::scale_for(const SearchOptions& options) const {
  return choose_sparsity_scale(options.sparsity.scale, sparse_encoder_.get());
}

std::vector<Hit> rerank(const CandidateRows& candidates, const float* sparse_query, const SearchOptions& options,
                        const Encoder* sparse_encoder, const std::vector<std::string>& exclude, Stance stance) {
  if (options.k == 0) throw InvalidArgument("k must be >= 1");
  validate_settings(options);
  if (options.scorer != Scorer::kCosine && options.scorer != Scorer::kSparsity) {
    throw InvalidArgument("rerank scores candidates found elsewhere by cosine or cosine + alpha * sparsity; scorer '" +
                          to_string(options.scorer) + "' needs the index's token rows");
  }
  const std::size_t n = candidates.ids.size();
  if (candidates.stage1.size() != n) {
    throw InvalidArgument("rerank: " + std::to_string(candidates.stage1.size()) + " stage-1 scores for " +
                          std::to_string(n) + " candidate ids");
  }
  for (float s : candidates.stage1) {
    if (!std::isfinite(s)) throw InvalidArgument("rerank: stage-1 scores must be finite");
  }
  if (!candidates.texts.empty() && candidates.texts.size() != n) {
    throw InvalidArgument("rerank: " + std::to_string(candidates.texts.size()) + " texts for " + std::to_string(n) +
                          " candidate ids (give one per id, or none)");
  }
  const bool sparse = options.scorer == Scorer::kSparsity;
  const float alpha = sparse ? choose_alpha(options.alpha, sparse_encoder).value : 0.0f;
  scoring::SparsityOptions sparsity_options = options.sparsity;
  if (sparse) sparsity_options.scale = choose_sparsity_scale(options.sparsity.scale, sparse_encoder).value;
  const std::unordered_set<std::string> excluded(exclude.begin(), exclude.end());
  std::vector<std::size_t> kept;  // candidate positions that may be returned, in the store's order
  for (std::size_t i = 0; i < n; ++i) {
    if (!excluded.count(candidates.ids[i])) kept.push_back(i);
  }
  std::vector<float> stage1(kept.size()), sparsity(kept.size(), 0.0f);
  for (std::size_t j = 0; j < kept.size(); ++j) stage1[j] = candidates.stage1[kept[j]];
  std::vector<float> final_score = stage1;
  if (options.scorer == Scorer::kSparsity && n > 0) {
    const std::size_t d = candidates.sparse_dim;
    if (sparse_query == nullptr || d == 0 || (candidates.sparse == nullptr) == (candidates.sparse_f16 == nullptr)) {
      throw InvalidArgument("rerank with a sparsity scorer needs Es(q) and one Es row per candidate (float32 or float16)");
    }
    std::vector<std::int64_t> rows(kept.begin(), kept.end());
    const MatrixView query(sparse_query, 1, d);
    if (candidates.sparse_f16 != nullptr) {
      scoring::sparsity_scores_gather_f16(query, candidates.sparse_f16, n, rows.data(), rows.size(), sparsity_options,
                                          sparsity.data());
    } else {
      scoring::sparsity_scores_gather(query, candidates.sparse, n, rows.data(), rows.size(), sparsity_options,
                                      sparsity.data());
    }
    scoring::final_scores(stage1.data(), sparsity.data(), kept.size(), alpha,
                          sparsity_direction(resolve_stance(stance, options.stance)),
                          sparsity_options, final_score.data());
  }
  return ranked_hits(final_score, std::vector<std::int64_t>(kept.begin(), kept.end()), options.k, [&](std::size_t j) {
    Hit h;
    h.id = candidates.ids[kept[j]];
    if (!candidates.texts.empty()) h.text = candidates.texts[kept[j]];
    h.cosine = h.stage1 = stage1[j];
    h.sparsity = sparsity[j];
    return h;
  });
}

namespace {

void describe_source(std::ostringstream& out, AlphaChoice::Source source, const std::string& model,
                     const std::string& tuned_by) {
  switch (source) {
    case AlphaChoice::Source::kGiven: out << " (given)"; break;
    case AlphaChoice::Source::kRecorded: out << " (recorded by " << model << ")"; break;
    case AlphaChoice::Source::kDefault:
      out << " (default: " << (model.empty() ? std::string("no sparse model") : model + " records none") << ")";
      break;
    case AlphaChoice::Source::kTuned: out << " (tuned by " << tuned_by << ")"; break;
  }
}

// training.<key> of Es's manifest when it records one (checked as Encoder::load checks it).
std::optional<float> recorded_setting(const Encoder* sparse_encoder, const char* key) {
  if (!sparse_encoder) return std::nullopt;
  return sparse_encoder->manifest().recorded_search_setting(key, sparse_encoder->directory() + "/manifest.json");
}

}  // namespace

std::string AlphaChoice::describe() const {
  std::ostringstream out;
  out << "alpha " << value;
  describe_source(out, source, model, tuned_by);
  return out.str();
}

std::string ScaleChoice::describe() const {
  if (value == 0.0f) return "";
  std::ostringstream out;
  out << "scale " << value;
  describe_source(out, source, model, tuned_by);
  return out.str();
}

AlphaChoice choose_alpha(std::optional<float> given, const Encoder* sparse_encoder) {
  AlphaChoice choice;
  if (sparse_encoder) choice.model = sparse_encoder->manifest().name;
  if (given) {
    if (!std::isfinite(*given)) throw InvalidArgument("alpha must be finite, got " + std::to_string(*given));
    choice.value = *given;
    choice.source = AlphaChoice::Source::kGiven;
  } else if (const auto recorded = recorded_setting(sparse_encoder, "alpha")) {
    choice.value = *recorded;
    choice.source = AlphaChoice::Source::kRecorded;
  }
  return choice;
}

ScaleChoice choose_sparsity_scale(std::optional<float> given, const Encoder* sparse_encoder) {
  ScaleChoice choice;
  if (sparse_encoder) choice.model = sparse_encoder->manifest().name;
  if (given) {
    if (!std::isfinite(*given) || *given < 0.0f) {
      throw InvalidArgument("the sparsity scale (tau) must be finite and >= 0, got " + std::to_string(*given));
    }
    choice.value = *given;
    choice.source = AlphaChoice::Source::kGiven;
  } else if (const auto recorded = recorded_setting(sparse_encoder, "sparsity_scale")) {
    choice.value = *recorded;
    choice.source = AlphaChoice::Source::kRecorded;
  }
  return choice;
}

std::string describe_weights(const AlphaChoice& alpha, const ScaleChoice& scale) {
  const std::string gate = scale.describe();
  return gate.empty() ? alpha.describe() : alpha.describe() + ", " + gate;
}

std::string describe_scoring(const SearchOptions& options, const AlphaChoice& alpha, const ScaleChoice& scale) {
  std::string line = "scorer " + to_string(options.scorer);
  if (options.scorer == Scorer::kSparsity) {
    line += " (" + scoring::to_string(options.sparsity.function) + "), " + describe_weights(alpha, scale);
  }
  return line;
}

void check_encoders(const index::DocumentIndex& index, const Encoder* encoder, const Encoder* sparse_encoder) {
  const index::IndexOptions& options = index.options();
  if (sparse_encoder && options.sparse_dim == 0) {
    throw InvalidArgument("a sparse encoder was given but the index stores no sparse-aware embeddings (Es): build "
                          "it with one (index build --sparse-model; Python: Index.build(..., sparse_encoder=))");
  }
  require_recorded_encoder(options.encoder_id, options.encoder_settings, encoder, "encoder");
  require_recorded_encoder(options.sparse_encoder_id, options.sparse_encoder_settings, sparse_encoder,
                           "sparse encoder");
  if (encoder && encoder->dim() != options.dim) {
    throw InvalidArgument("encoder " + encoder->manifest().name + " has width " + std::to_string(encoder->dim()) +
                          " but the index stores width " + std::to_string(options.dim));
  }
  if (sparse_encoder && sparse_encoder->dim() != options.sparse_dim) {
    throw InvalidArgument("sparse encoder " + sparse_encoder->manifest().name + " has width " +
                          std::to_string(sparse_encoder->dim()) + " but the index stores Es of width " +
                          std::to_string(options.sparse_dim));
  }
  if (encoder && options.store_token_embeddings && encoder->token_dim() != options.token_dim) {
    throw InvalidArgument("encoder token width " + std::to_string(encoder->token_dim()) +
                          " differs from the index's token width " + std::to_string(options.token_dim));
  }
}

index::IndexOptions index_options_for(const Encoder& encoder, const Encoder* sparse_encoder, bool tokens) {
  index::IndexOptions options;
  options.store_token_embeddings = tokens;
  options.token_dim = tokens ? encoder.token_dim() : 0;
  options.dim = encoder.dim();
  options.encoder_id = encoder.identity();
  options.encoder_settings = encoder.settings();
  if (sparse_encoder) {
    options.sparse_dim = sparse_encoder->dim();
    options.sparse_encoder_id = sparse_encoder->identity();
    options.sparse_encoder_settings = sparse_encoder->settings();
  }
  return options;
}

void add_documents(index::DocumentIndex& index, const std::vector<std::string>& texts,
                   const std::vector<std::string>& ids, const Encoder& encoder, const Encoder* sparse_encoder,
                   std::size_t batch_size, const ProgressCallback& progress, FeatureCache* cache) {
  // Worded for every caller's user (Index.build / Index.add keywords, the index workflows' fields).
  if (ids.size() != texts.size()) {
    throw InvalidArgument("texts and ids must have the same length: " + std::to_string(texts.size()) + " texts, " +
                          std::to_string(ids.size()) + " ids");
  }
  if (batch_size == 0) throw InvalidArgument("add_documents: batch_size must be > 0");
  require_recorded_encoder(index.options().encoder_id, index.options().encoder_settings, &encoder,
                           "add_documents: encoder");
  require_recorded_encoder(index.options().sparse_encoder_id, index.options().sparse_encoder_settings, sparse_encoder,
                           "add_documents: sparse encoder");
  // All or nothing: every id is checked before anything is encoded, the whole call is encoded
  // (where an error, a cancelled progress callback or Ctrl-C stops it with nothing added), and
  // only then is everything added in one DocumentIndex::add.
  std::unordered_map<std::string, std::size_t> first_item;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i].empty()) throw InvalidArgument("add_documents: item " + std::to_string(i) + " has an empty id");
    const auto [seen, inserted] = first_item.emplace(ids[i], i);
    if (!inserted) {
      throw InvalidArgument("add_documents: id '" + ids[i] + "' appears twice in this call (items " +
                            std::to_string(seen->second) + " and " + std::to_string(i) + ")");
    }
    if (index.contains(ids[i])) {
      throw InvalidArgument("add_documents: id '" + ids[i] + "' (item " + std::to_string(i) +
                            ") is already in the index");
    }
  }
  const bool tokens = index.options().store_token_embeddings;
  EncodeOptions encode;
  encode.role = TextRole::kDocument;
  Matrix dense(ids.size(), index.options().dim);
  Matrix sparse = sparse_encoder ? Matrix(ids.size(), index.options().sparse_dim) : Matrix();
  std::vector<Matrix> token_rows;
  if (tokens) token_rows.reserve(ids.size());
  for (std::size_t start = 0; start < ids.size(); start += batch_size) {
    const std::size_t end = std::min(ids.size(), start + batch_size);
    std::vector<std::string> batch_texts(texts.begin() + long(start), texts.begin() + long(end));
    const auto stage = [&](const Matrix& rows, Matrix& into, const char* what) {
      if (rows.rows() != batch_texts.size() || rows.cols() != into.cols()) {
        throw InvalidArgument(std::string("add_documents: the ") + what + " gives " + std::to_string(rows.cols()) +
                              "-wide rows, the index stores " + std::to_string(into.cols()));
      }
      std::copy(rows.values().begin(), rows.values().end(), into.row(start));
    };
    if (sparse_encoder) {
      // One forward pass when Es is a head over E's network, none for texts the cache holds.
      auto [e, es] = cache ? cache->encode_both(encoder, *sparse_encoder, batch_texts, encode)
                           : Encoder::encode_both(encoder, *sparse_encoder, batch_texts, encode);
      stage(e, dense, "encoder");
      stage(es, sparse, "sparse encoder");
    } else {
      stage(cache ? cache->encode(encoder, batch_texts, encode) : encoder.encode(batch_texts, encode), dense,
            "encoder");
    }
    if (tokens) {
      for (Matrix& m : encoder.encode_tokens(batch_texts, encode)) token_rows.push_back(std::move(m));
    }
    report_progress(progress, end, ids.size(), "add_documents");
  }
  index.add(texts, ids, dense.view(), sparse.view(), token_rows);
}

}  // namespace counterpoint::retrieval
