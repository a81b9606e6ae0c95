// `counterpoint stance`: stance-aware retrieval on a set labelled like IBM Debater Claim Stance.
// Each query asks for the claims of one stance on one topic; its text is an instruction for that
// stance followed by the topic (the BM25 side of a hybrid search sees the topic only). Prints
// P@R, Hard@R, Semi@R, Easy@R and nDCG@10 per instruction template and their mean, and with
// --ablation the word-ablation diagnostics RIS / RCS / DI per document class.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "commands.h"
#include "counterpoint/eval/retrieval_task.h"
#include "corpus_input.h"
#include "counterpoint/core/errors.h"
#include "counterpoint/core/files.h"
#include "counterpoint/data/beir.h"
#include "counterpoint/data/metadata.h"
#include "counterpoint/eval/stance.h"
#include "counterpoint/eval/word_ablation.h"
#include "counterpoint/training/triples.h"

namespace counterpoint::cli {

namespace {

struct StanceArgs {
  std::string dataset, qrels, model = kDefaultDenseModel, templates = "held-out", stage1 = "dense", fusion = "rsf",
              index_cache;
  float lambda = 0.1f;
  std::size_t candidates = 1000, ablation = 0;
  int threads = 0;
};

const char* kClassNames[] = {"positive", "hard", "semi-hard", "easy"};

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(' ');
  return first == std::string::npos ? "" : s.substr(first, s.find_last_not_of(' ') - first + 1);
}

void print_scores(const std::string& label, const eval::StanceScores& s) {
  std::cout << std::left << std::setw(44) << label << std::right << std::fixed << std::setprecision(4)
            << std::setw(8) << s.precision_at_r << std::setw(9) << s.hard_at_r << std::setw(9) << s.semi_at_r
            << std::setw(9) << s.easy_at_r << std::setw(9) << s.ndcg_at_10 << "\n";
}

// The query's stance as the instruction vocabulary names it.
std::string requested(const eval::StanceLabel& label) { return label.stance == "pro" ? "support" : "attack"; }

// Up to `per_class` documents of each class for `query`, in corpus order.
std::vector<std::pair<std::string, std::string>> ablation_documents(
    const eval::StanceLabel& query, const std::vector<data::Document>& corpus,
    const std::map<std::string, eval::StanceLabel>& labels, std::size_t per_class) {
  std::map<eval::DocumentClass, std::size_t> taken;
  std::vector<std::pair<std::string, std::string>> picked;  // (class name, document id)
  for (const auto& d : corpus) {
    auto label = labels.find(d.id);
    if (label == labels.end()) continue;
    const auto c = eval::classify(query, label->second);
    if (taken[c]++ < per_class) picked.emplace_back(kClassNames[int(c)], d.id);
  }
  return picked;
}

}  // namespace

void add_stance_command(CLI::App& app) {
  auto a = std::make_shared<StanceArgs>();
  auto* cmd = app.add_subcommand("stance", "Stance-aware retrieval: P@R, Hard@R, Semi@R, nDCG@10 and word ablation");
  cmd->add_option("--dataset", a->dataset, "BEIR directory with metadata.jsonl (topic_id, stance per claim)")->required();
  cmd->add_option("--qrels", a->qrels, "Qrels file; only its queries are run")->required();
  cmd->add_option("--model", a->model, "Encoder E (name or directory)");
  cmd->add_option("--templates", a->templates, "Instruction templates: held-out (never trained on) or training");
  cmd->add_option("--stage1", a->stage1, "dense, bm25 or hybrid (BM25 sees the topic without the instruction)");
  cmd->add_option("--fusion", a->fusion, "rsf or rrf (hybrid)");
  cmd->add_option("--lambda", a->lambda, "RSF weight of BM25");
  cmd->add_option("--candidates", a->candidates, "Stage-1 candidates");
  cmd->add_option("--index-cache", a->index_cache, "Index directory to reuse, or to create when absent");
  cmd->add_option("--ablation", a->ablation, "Word ablation on up to N documents per class per query (first template)");
  cmd->add_option("--threads", a->threads, "Threads (0 = all cores)");
  cmd->callback([a] {
    const auto dataset = data::load_beir(a->dataset);
    const auto qrels = data::load_qrels(a->qrels);
    const auto document_labels = eval::stance_labels(data::load_metadata(join_path(a->dataset, "metadata.jsonl")));
    std::vector<data::Query> queries;
    for (const auto& q : dataset.queries) if (qrels.count(q.id)) queries.push_back(q);
    if (queries.empty()) throw InvalidArgument("no query of " + a->dataset + " has judgements in " + a->qrels);
    const auto query_labels = eval::stance_labels(queries);
    std::vector<training::StanceTemplate> templates;
    if (a->templates == "held-out") templates = training::held_out_stance_templates();
    else if (a->templates == "training") templates = training::training_stance_templates();
    else throw InvalidArgument("--templates must be held-out or training, got '" + a->templates + "'");

    auto encoder = load_encoder(a->model, a->threads);
    auto idx = cached_corpus_index(a->index_cache, dataset.corpus, *encoder, nullptr);
    retrieval::Retriever retriever(idx, encoder, nullptr);
    retrieval::SearchOptions options;
    options.stage1 = retrieval::parse_stage1(a->stage1);
    options.fusion = retrieval::parse_fusion(a->fusion);
    options.fusion_lambda = a->lambda;
    options.candidates = std::min(a->candidates, idx->size());
    std::map<std::string, std::size_t> positives;  // R per query, which bounds the depth P@R needs
    for (const auto& q : queries) {
      for (const auto& [doc, label] : document_labels) {
        positives[q.id] += eval::classify(query_labels.at(q.id), label) == eval::DocumentClass::kPositive;
      }
    }
    std::size_t depth = 10;
    for (const auto& [id, r] : positives) depth = std::max(depth, r);
    options.k = std::min(depth, options.candidates);

    std::cout << "queries " << queries.size() << "  encoder " << encoder->manifest().name << "  stage1 " << a->stage1
              << "  templates " << a->templates << "\n";
    std::cout << std::left << std::setw(44) << "instruction (support / attack)" << std::right << std::setw(8) << "P@R"
              << std::setw(9) << "Hard@R" << std::setw(9) << "Semi@R" << std::setw(9) << "Easy@R" << std::setw(9)
              << "nDCG@10" << "\n";
    eval::StanceScores mean;
    for (const auto& t : templates) {
      data::RankedRun run;
      for (const std::string stance : {"support", "attack"}) {
        std::vector<std::string> ids, topics;
        for (const auto& q : queries) {
          if (requested(query_labels.at(q.id)) != stance) continue;
          ids.push_back(q.id);
          topics.push_back(q.text);
        }
        if (ids.empty()) continue;
        const std::string prefix = stance == "support" ? t.support : t.attack;
        const auto part = eval::ranked_run(ids, retriever.search(topics, options, &prefix));
        run.insert(part.begin(), part.end());
      }
      const auto scores = eval::evaluate_stance(run, query_labels, document_labels).mean;
      print_scores("\"" + trimmed(t.support) + "\"", scores);
      mean.precision_at_r += scores.precision_at_r / double(templates.size());
      mean.hard_at_r += scores.hard_at_r / double(templates.size());
      mean.semi_at_r += scores.semi_at_r / double(templates.size());
      mean.easy_at_r += scores.easy_at_r / double(templates.size());
      mean.ndcg_at_10 += scores.ndcg_at_10 / double(templates.size());
    }
    print_scores("mean over templates", mean);
    if (a->ablation == 0) return;

    // Word ablation with the first template: cosines of every query variant and document,
    // each text encoded once.
    std::unordered_map<std::string, std::vector<float>> query_rows, document_rows;
    std::map<std::string, std::string> text_of;
    for (const auto& d : dataset.corpus) text_of[d.id] = data::encoding_text(d);
    const std::string no_prefix;
    const auto row = [&](std::unordered_map<std::string, std::vector<float>>& cache, const std::string& text,
                         TextRole role) -> const std::vector<float>& {
      auto it = cache.find(text);
      if (it != cache.end()) return it->second;
      EncodeOptions encode;
      encode.role = role;
      encode.prefix_override = &no_prefix;
      const Matrix m = encoder->encode({text}, encode);
      return cache.emplace(text, std::vector<float>(m.data(), m.data() + m.cols())).first->second;
    };
    const eval::CosineFunction cosine = [&](const std::string& query, const std::string& document_id) {
      const auto& q = row(query_rows, query, TextRole::kQuery);
      const auto& d = row(document_rows, text_of.at(document_id), TextRole::kDocument);
      double dot = 0;
      for (std::size_t i = 0; i < q.size(); ++i) dot += double(q[i]) * double(d[i]);
      return dot;  // rows are L2-normalised
    };
    eval::AblationOptions ablation;
    ablation.compose = [](const std::string& instruction, const std::string& claim) {
      return instruction.empty() ? claim : instruction + " " + claim;
    };
    std::vector<std::pair<std::string, eval::WordAblation>> labelled;
    std::size_t done = 0;
    for (const auto& q : queries) {
      const auto& label = query_labels.at(q.id);
      const auto& t = templates.front();
      const eval::AblationQuery query{trimmed(requested(label) == "support" ? t.support : t.attack), q.text};
      for (const auto& [name, id] : ablation_documents(label, dataset.corpus, document_labels, a->ablation)) {
        labelled.emplace_back(name, eval::ablate_words(query, id, cosine, ablation));
      }
      std::cerr << "\rword ablation " << ++done << "/" << queries.size() << std::flush;
    }
    std::cerr << "\n";
    std::cout << "word ablation, instruction \"" << trimmed(templates.front().support) << "\" / \""
              << trimmed(templates.front().attack) << "\", up to " << a->ablation << " documents per class per query\n";
    std::cout << std::left << std::setw(12) << "class" << std::right << std::setw(6) << "docs" << std::setw(18)
              << "RIS mean (std)" << std::setw(18) << "RCS mean (std)" << std::setw(20) << "DI mean (std)" << "\n";
    for (const auto& [name, s] : eval::summarize_ablation(labelled)) {
      const auto cell = [](const eval::MeanStd& v) {
        std::ostringstream out;
        out << std::fixed << std::setprecision(4) << v.mean << " (" << std::setprecision(4) << v.std << ")";
        return out.str();
      };
      std::cout << std::left << std::setw(12) << name << std::right << std::setw(6) << s.documents << std::setw(18)
                << cell(s.ris) << std::setw(18) << cell(s.rcs) << std::setw(20) << cell(s.di) << "\n";
    }
  });
}

}  // namespace counterpoint::cli
