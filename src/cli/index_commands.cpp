// `counterpoint index build|info`.
#include <iostream>

#include "commands.h"
#include "counterpoint/app/corpus_index.h"
#include "counterpoint/core/spelling.h"
#include "counterpoint/data/corpus_files.h"
#include "counterpoint/retrieval/retriever.h"

namespace counterpoint::cli {

void add_index_commands(CLI::App& app) {
  auto* index = app.add_subcommand("index", "Build or inspect an index directory");
  index->require_subcommand(1);

  struct BuildArgs {
    std::string corpus, out, model = kDefaultDenseModel, sparse_model;
    app::IndexBuild build;  // kind, storage and batch size: the library's defaults
    bool no_bm25 = false;
    int threads = 0;
  };
  auto a = std::make_shared<BuildArgs>();
  auto* build = index->add_subcommand("build", "Encode a corpus and write an index directory");
  build->add_option("--corpus", a->corpus, std::string("The corpus: ") + data::kCorpusFormats)->required();
  build->add_option("--out", a->out, "Index directory to write (replaced atomically)")->required();
  build->add_option("--model", a->model, "Dense encoder E (name or directory)");
  auto* sparse_opt =
      build->add_option("--sparse-model", a->sparse_model, "Sparse-aware encoder Es (name or directory)");
  build->add_option("--kind", a->build.kind, "flat, hnsw, ivf or ivfpq");
  build->add_flag("--fp16", a->build.fp16, "Store Es as float16 (half the memory)")->needs(sparse_opt);
  build->add_flag("--tokens", a->build.tokens, "Store per-token embeddings for token-level scorers");
  auto* no_bm25 =
      build->add_flag("--no-bm25", a->no_bm25, "Build no BM25 postings (stage1 bm25 and hybrid then refuse the index)");
  build->add_flag("--stem", a->build.stem, "Stem BM25 terms (Snowball English)")->excludes(no_bm25);
  build->add_option("--threads", a->threads, "Encoder threads (0 = all cores)");
  build->add_option("--batch-size", a->build.batch_size,
                    "Documents encoded per step (texts are length-sorted within a step)");
  build->callback([a] {
    a->build.bm25 = !a->no_bm25;
    app::validate(a->build, !a->sparse_model.empty());
    index::DocumentIndex::require_saveable(a->out);  // before minutes of encoding, not after
    auto encoder = load_encoder(a->model, a->threads);
    std::shared_ptr<Encoder> sparse = a->sparse_model.empty() ? nullptr : load_encoder(a->sparse_model, a->threads);
    const auto built =
        app::build_index(data::load_documents(a->corpus), *encoder, sparse.get(), a->build, stderr_progress("encoding"));
    built->save(a->out);
    std::cout << "indexed " << built->size() << " documents into " << a->out << "\n";
    // A plain-text corpus carries no ids: they are its line numbers, which the user can always
    // read back from the file itself, so nothing else needs writing. Say so where they first meet them.
    const std::string corpus = ascii_lower(a->corpus);
    if (corpus.size() > 4 && corpus.compare(corpus.size() - 4, 4, ".txt") == 0) {
      std::cout << "ids are the documents' line numbers in " << a->corpus << " (1 = its first line)\n";
    }
  });

  auto* info = index->add_subcommand("info", "Describe an index directory");
  auto dir = std::make_shared<std::string>();
  info->add_option("index", *dir, "Index directory")->required();
  info->callback([dir] {
    const auto loaded = index::DocumentIndex::load(*dir);
    const auto& o = loaded.options();
    std::cout << "documents   " << loaded.size() << " (slots " << loaded.slot_capacity() << ")\n"
              << "kind        " << o.kind << "\n"
              << "dense dim   " << o.dim << "\n"
              << "sparse dim  " << o.sparse_dim
              << (o.sparse_dim ? (o.sparse_storage == index::IndexOptions::SparseStorage::kFloat16 ? " (float16)" : " (float32)") : "")
              << "\n"
              << "tokens      " << (o.store_token_embeddings ? std::to_string(o.token_dim) + "-d" : "not stored") << "\n"
              << "bm25        " << (loaded.has_bm25() ? "k1 " + std::to_string(o.bm25.k1) + ", b " + std::to_string(o.bm25.b) : "none") << "\n"
              << "memory      " << loaded.memory_bytes() / (1024.0 * 1024.0) << " MiB\n"
              << "encoder     " << (o.encoder_id.empty() ? "not recorded" : o.encoder_id) << "\n"
              << "sparse enc. " << (o.sparse_encoder_id.empty() ? "not recorded" : o.sparse_encoder_id) << "\n";
  });
}

}  // namespace counterpoint::cli
