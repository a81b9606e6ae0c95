#!/usr/bin/env python3
"""Issue #30's measurement: does a trained stance stage over topical recall retrieve by stance on
IBM Debater Claim Stance where the bi-encoder curricula stay at P@R ~0.40?

Stage 1 is the library's dense search, exactly as `counterpoint stance` runs it: the query is a
held-out instruction template + the topic (prefix override), the corpus is every claim of the 55
topics, cosine of the encoder's pooled, normalised embeddings (computed through the binding, cached
in --cache). Stage 2 reorders stage 1's top K by a cross-encoder over the joined pair
"[CLS] topic [SEP] claim [SEP]": the encoder's own TorchScript network (all its weights trainable;
the network takes no token type ids, so both segments are type 0) and a linear head on its pooled
output, fine-tuned on the fitting topics' claims only and early-stopped on the dev topics.
Heads:
  stance2   pro / con; the score is P(requested stance | topic, claim)
  stance3   pro / con / unrelated (claims of other fitting topics, half of them the ones nearest the
            topic by cosine, half random), so the stage also pushes off-topic claims down
The requested stance comes from the query's label (what a parser of the
instruction, or an explicit stance=, gives the library). Final score = P + w * minmax(cos over the
top K); the rest of the ranking keeps stage 1's order. K and w are chosen on dev, with the head and
the epoch; the test topics are scored once, for the configuration chosen on dev (--test).

Metrics by the library's cp.evaluate_stance (src/eval/stance.cpp), mean over the two held-out
templates: P@R (R = claims of the query's topic and stance), Hard@R (same topic, other stance),
Semi@R (other topic, same stance), Easy@R, nDCG@10. Dev topics = the last --dev-topics training
topics by id (t987 t990 t994 t1005 t1065 with the default 5), fitting topics = the other 20, as
benchmarks/tables/stance_table.sh.

    nice -n 15 .venv/bin/python benchmarks/tables/stance_stage_study.py \\
        [--data ../shared/data/ibm-claim-stance] [--train-qrels DATA/qrels/train.tsv] \\
        [--eval-qrels DATA/qrels/test.tsv] [--model all-minilm-l6-v2] [--heads stance2,stance3] \\
        [--epochs 2] [--lr 3e-5] [--seed 42] [--threads 2] [--test]

Writes benchmarks/results/stance_stage_study.{json,md} (--results-name) and prints the table; the
fine-tuned networks (with their training record) and the stage-1 embeddings are cached in --cache (delete to retrain)."""
import argparse
import copy
import hashlib
import json
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
import bench  # noqa: E402

# The held-out instruction templates of src/training/triples.cpp (not exposed to Python): (support, attack).
HELD_OUT_TEMPLATES = [("Find an argument supporting the claim: ", "Find an argument attacking the claim: "),
                      ("Show me a point that backs this up: ", "Show me a point that refutes this: ")]
STANCE_OF = {"support": "pro", "attack": "con"}
METRICS = ["P@R", "Hard@R", "Semi@R", "Easy@R", "nDCG@10"]
HEADS = {"stance2": 2, "stance3": 3}


# ---------------------------------------------------------------------------------------------
# Data: claims, labels, queries, the fitting / dev / test topics


class StanceSet:
    def __init__(self, cp, data_dir, train_qrels, eval_qrels, dev_topics):
        self.cp = cp
        self.corpus = {d.id: d.encoding_text for d in cp.load_corpus(data_dir)}
        self.doc_ids = list(self.corpus)
        self.label = {}  # doc id -> (topic, pro|con)
        for m in bench.read_jsonl(Path(data_dir) / "metadata.jsonl"):
            stance = str(m["stance"]).lower()
            self.label[m["_id"]] = ("t" + str(m["topic_id"]).lstrip("t"), {"support": "pro", "attack": "con"}.get(stance, stance))
        # R counts the corpus's claims, so evaluate_stance is given the labels of those alone.
        self.corpus_labels = {d: self.label[d] for d in self.doc_ids}
        self.queries = {}  # query id -> (topic, pro|con, topic text)
        for q in cp.load_queries(Path(data_dir) / "queries.jsonl"):
            self.queries[q.id] = ("t" + str(q.extra["topic_id"]).lstrip("t"), STANCE_OF[q.extra["stance"]], q.text)
        self.topic_text = {t: text for t, _, text in self.queries.values()}
        train = [q for q in cp.load_qrels(train_qrels) if q in self.queries]
        test = [q for q in cp.load_qrels(eval_qrels) if q in self.queries]
        topics = sorted({self.queries[q][0] for q in train}, key=lambda t: int(t.lstrip("t")))
        if not 0 < dev_topics < len(topics):
            raise SystemExit(f"--dev-topics must be between 1 and {len(topics) - 1}, got {dev_topics}")
        self.dev_topics = topics[-dev_topics:]
        self.fit_topics = topics[:-dev_topics]
        self.split_queries = {"dev": sorted(q for q in train if self.queries[q][0] in self.dev_topics),
                              "test": sorted(test)}
        self.claims_of = {}
        for d in self.doc_ids:
            self.claims_of.setdefault(self.label[d][0], []).append(d)
        self.positives = {q: sum(1 for d in self.doc_ids if self.label[d] == (t, s))
                          for q, (t, s, _) in self.queries.items()}

    def evaluate(self, rankings):
        """{query id: ranked doc ids} -> the metrics' means over these queries (eval::evaluate_stance)."""
        # evaluate_stance ranks by score (ties by id), so scores falling with the rank keep each
        # ranking's own order; it reads no deeper than max(R, 10).
        run = {q: [(d, -float(rank)) for rank, d in enumerate(ranking[:max(self.positives[q], 10)])]
               for q, ranking in rankings.items()}
        return self.cp.evaluate_stance(run, {q: self.queries[q][:2] for q in rankings}, self.corpus_labels)


# ---------------------------------------------------------------------------------------------
# Stage 1: the library's dense search (binding), cached


def stage1_key(model):
    """The network file's checksum as the manifest records it (16 hex digits)."""
    manifest = json.loads((Path(model) / "manifest.json").read_text())
    return manifest["files"][manifest["model_file"]][:16]


def stage1(cp, data, model, cache, threads):
    """Unit embeddings of the claims, of each (held-out template, query) and of each plain topic."""
    path = Path(cache) / f"stage1-{Path(model).name}-{stage1_key(model)}.npz"
    qids = sorted(data.queries)
    topics = sorted(data.topic_text)
    if path.exists():
        z = np.load(path, allow_pickle=False)
        if list(z["doc_ids"]) == data.doc_ids and list(z["qids"]) == qids:
            return z["docs"], {q: z["queries"][:, i] for i, q in enumerate(qids)}, \
                {t: z["topics"][i] for i, t in enumerate(topics)}
    enc = cp.Encoder.load(str(model), threads=threads)
    docs = enc.encode([data.corpus[d] for d in data.doc_ids])
    per_template = []
    for support, attack in HELD_OUT_TEMPLATES:
        rows = []
        for q in qids:
            topic, stance, text = data.queries[q]
            rows.append(enc.encode([text], query=True, prefix=support if stance == "pro" else attack)[0])
        per_template.append(np.stack(rows))
    queries = np.stack(per_template)  # [templates, queries, dim]
    plain = enc.encode([data.topic_text[t] for t in topics], query=True, prefix="")
    np.savez(path, docs=docs, queries=queries, topics=plain, doc_ids=np.array(data.doc_ids), qids=np.array(qids))
    return docs, {q: queries[:, i] for i, q in enumerate(qids)}, {t: plain[i] for i, t in enumerate(topics)}


def candidate_lists(data, docs, qemb, split, depth):
    """(template index, query id) -> (top doc ids, their cosines) by stage-1 cosine, as deep as
    `depth` and as the metrics read (R, at least 10), as `counterpoint stance` searches."""
    out = {}
    for q in data.split_queries[split]:
        for ti in range(len(HELD_OUT_TEMPLATES)):
            cos = docs @ qemb[q][ti]
            order = np.argsort(-cos, kind="stable")[:max(depth, data.positives[q], 10)]
            out[(ti, q)] = ([data.doc_ids[i] for i in order], cos[order])
    return out


def rerank_rankings(data, lists, k, score_of, w):
    """Per template: top k reordered by score + w * minmax(cos), the rest in stage-1 order."""
    per_template = []
    for ti in range(len(HELD_OUT_TEMPLATES)):
        rankings = {}
        for (t, q), (ids, cos) in lists.items():
            if t != ti:
                continue
            head, c = ids[:k], cos[:k]
            n = (c - c.min()) / (c.max() - c.min() + 1e-8)
            s = np.array([score_of(ti, q, d) for d in head]) + w * n
            order = np.argsort(-s, kind="stable")
            rankings[q] = [head[i] for i in order] + ids[k:]
        per_template.append(data.evaluate(rankings))
    return {m: float(np.mean([p[m] for p in per_template])) for m in METRICS}


# ---------------------------------------------------------------------------------------------
# Stage 2: the cross-encoder


class CrossEncoder(torch.nn.Module):
    def __init__(self, network, dim, classes):
        super().__init__()
        self.network = network
        self.dropout = torch.nn.Dropout(0.1)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, ids, mask):
        _, pooled = self.network(ids, mask)
        return self.head(self.dropout(pooled))


class PairTokens:
    """[CLS] first [SEP] second [SEP] from the library's tokenizer, cut to max_length (the second
    segment first, as WordPieceTokenizer::encode_pair cuts the longer one)."""

    def __init__(self, enc, max_length):
        self.enc, self.max_length, self.memo = enc, max_length, {}

    def ids(self, text):
        if text not in self.memo:
            self.memo[text] = self.enc.tokenize([text])[0]
        return self.memo[text]

    def pair(self, first, second):
        a, b = self.ids(first), self.ids(second)[1:]
        room = self.max_length - len(a)
        if room < 2:
            a, room = a[:self.max_length - 3] + a[-1:], 2
        return a + (b if len(b) <= room else b[:room - 1] + b[-1:])


def batch_tensors(pairs):
    width = max(len(p) for p in pairs)
    ids = torch.zeros(len(pairs), width, dtype=torch.long)
    mask = torch.zeros(len(pairs), width, dtype=torch.long)
    for i, p in enumerate(pairs):
        ids[i, :len(p)] = torch.tensor(p)
        mask[i, :len(p)] = 1
    return ids, mask


def probabilities(model, pairs, batch_size=64):
    model.eval()
    out = []
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i]))  # similar lengths share a batch
    with torch.no_grad():
        for s in range(0, len(order), batch_size):
            idx = order[s:s + batch_size]
            ids, mask = batch_tensors([pairs[i] for i in idx])
            out.append((idx, torch.softmax(model(ids, mask), -1).numpy()))
    probs = np.zeros((len(pairs), out[0][1].shape[1]), dtype=np.float32)
    for idx, p in out:
        probs[idx] = p
    return probs


def training_examples(data, head, tokens, plain_topics, docs, rng, unrelated_ratio):
    """(token ids, label) of the fitting topics only."""
    examples = []
    index_of = {d: i for i, d in enumerate(data.doc_ids)}
    for topic in data.fit_topics:
        text = data.topic_text[topic]
        claims = data.claims_of[topic]
        examples += [(tokens.pair(text, data.corpus[d]), 0 if data.label[d][1] == "pro" else 1) for d in claims]
        if head == "stance3":
            others = [d for t in data.fit_topics if t != topic for d in data.claims_of[t]]
            n = int(round(unrelated_ratio * len(claims)))
            cos = docs[[index_of[d] for d in others]] @ plain_topics[topic]
            nearest = [others[i] for i in np.argsort(-cos)[:n // 2]]
            rest = [d for d in others if d not in set(nearest)]
            examples += [(tokens.pair(text, data.corpus[d]), 2) for d in nearest + rng.sample(rest, n - len(nearest))]
    return examples


def attack_triples(data, rng, per_claim=2):
    """(topic text, con claim, pro claim, topic id) of the fitting topics: anchor = the topic, positive
    = a claim contesting it, negative = a claim of the same topic supporting it, `per_claim` drawn
    per con claim. What both the Es head and the map verifier learn attack from."""
    out = []
    for topic in data.fit_topics:
        pro = [d for d in data.claims_of[topic] if data.label[d][1] == "pro"]
        for d in (d for d in data.claims_of[topic] if data.label[d][1] == "con"):
            for p in rng.sample(pro, min(per_claim, len(pro))):
                out.append((data.topic_text[topic], data.corpus[d], data.corpus[p], topic))
    return out


def write_es_triples(data, path, rng):
    """SparseCL triples (group = the topic) for an Es that reads attack as sparsity."""
    lines = ["\t".join(t) for t in attack_triples(data, rng)]
    Path(path).write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} triples -> {path}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# Stage 2: a map verifier (F3 CNN / F4 Transformer over token-token cosine maps of the frozen
# encoder), trained on stance labels through the library's train_verifier


class VerifierScorer:
    """Map-verifier scores of every candidate pair of a split's stage-1 lists. The verifier learns
    to accept a claim attacking the topic; support reads the score negated. Scores are
    standardised over the pool so that w * minmax(cos) weighs on the same scale as for the
    cross-encoder's probabilities."""

    def __init__(self, cp, data, enc, lists):
        self.data = data
        keys = sorted({(data.queries[q][2], d) for (ti, q), (ids, _) in lists.items() for d in ids})
        topics = sorted({t for t, _ in keys})
        claims = sorted({d for _, d in keys})
        topic_tokens = dict(zip(topics, enc.encode_tokens(topics, query=True, prefix="")))
        claim_tokens = dict(zip(claims, enc.encode_tokens([data.corpus[d] for d in claims])))
        self.keys = keys
        self.maps = [cp.token_map(topic_tokens[t], claim_tokens[d]) for t, d in keys]
        self.scores = None

    def fill(self, verifier):
        raw = np.asarray(verifier.score(self.maps), dtype=np.float64)
        self.scores = dict(zip(self.keys, (raw - raw.mean()) / (raw.std() + 1e-12)))

    def score(self, ti, q, d):
        s = float(self.scores[(self.data.queries[q][2], d)])
        return s if self.data.queries[q][1] == "con" else -s

    def stance_auc(self):
        """P(a con claim of a topic outscores a pro claim of the same topic), over the scored pairs."""
        by_topic = {}
        for (first, d), s in self.scores.items():
            topic, stance = self.data.label[d]
            if self.data.topic_text[topic] == first:
                by_topic.setdefault(topic, {"pro": [], "con": []})[stance].append(s)
        wins = total = 0.0
        for groups in by_topic.values():
            con, pro = np.array(groups["con"]), np.array(groups["pro"])
            if len(con) and len(pro):
                wins += float((con[:, None] > pro[None, :]).sum() + 0.5 * (con[:, None] == pro[None, :]).sum())
                total += len(con) * len(pro)
        return round(wins / total, 4) if total else None


def train_stance_verifier(cp, args, data, architecture, log):
    """The library's train_verifier on the fitting topics' attack triples, early-stopped on the dev
    topics' own claims (ROC-AUC of con over pro); cached in --cache by its settings."""
    settings = {"architecture": architecture, "epochs": args.verifier_epochs, "seed": args.seed,
                "dev_topics": args.dev_topics, "batch_size": args.verifier_batch_size, "encoder": stage1_key(args.model)}
    key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
    out = Path(args.cache) / f"verifier-{architecture}-{key}"
    info_path = out / "study.json"
    if info_path.exists():
        log(f"verifier {architecture}: read from {out}")
        return cp.MapVerifier.load(str(out)), json.loads(info_path.read_text())
    triples = [cp.Triple(a, p, [n], g) for a, p, n, g in attack_triples(data, random.Random(args.seed))]
    dev_pairs = [cp.LabeledPair(data.topic_text[t], data.corpus[d], data.label[d][1] == "pro")
                 for t in data.dev_topics for d in data.claims_of[t]]
    c0, w0 = bench.cpu_seconds(), time.time()
    report = cp.train_verifier(str(args.model), triples, str(out), architecture=architecture,
                               epochs=args.verifier_epochs, batch_size=args.verifier_batch_size, seed=args.seed,
                               threads=args.threads, dev_pairs=dev_pairs, patience=2)
    info = {"triples": len(triples), "steps": report.get("steps"), "dev_auc_by_epoch": report.get("dev_scores"),
            "train_cpu_s": round(bench.cpu_seconds() - c0, 1), "wall_s": round(time.time() - w0, 1)}
    info_path.write_text(json.dumps(info) + "\n")
    log(f"verifier {architecture}: {json.dumps(info)}")
    return cp.MapVerifier.load(str(out)), info


class PoolScorer:
    """Stage-2 scores of every candidate pair of a split's stage-1 lists (deepest K), each distinct
    (topic, claim) pair once; score(ti, q, d) = P(requested stance)."""

    def __init__(self, data, head, tokens, lists):
        self.data, self.head = data, head
        keys = set()
        for (ti, q), (ids, _) in lists.items():
            for d in ids:
                keys.add(self.key(ti, q, d))
        self.keys = sorted(keys)
        self.pairs = [tokens.pair(first, data.corpus[d]) for first, d in self.keys]
        self.probs = None

    def key(self, ti, q, d):
        return (self.data.queries[q][2], d)

    def fill(self, model):
        self.probs = dict(zip(self.keys, probabilities(model, self.pairs)))

    def score(self, ti, q, d):
        p = self.probs[self.key(ti, q, d)]
        return float(p[0] if self.data.queries[q][1] == "pro" else p[1])


def train(args, data, head, tokens, plain_topics, docs, dev_scorer, dev_lists, weights, log):
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    network = torch.jit.load(str(Path(args.model) / "model.pt"))
    dim = json.loads((Path(args.model) / "manifest.json").read_text())["embedding_dim"]
    model = CrossEncoder(network, dim, HEADS[head])
    examples = training_examples(data, head, tokens, plain_topics, docs, rng, args.unrelated_ratio)
    steps_per_epoch = (len(examples) + args.batch_size - 1) // args.batch_size
    total = steps_per_epoch * args.epochs
    warmup = max(1, total // 10)
    optimiser = torch.optim.AdamW([{"params": model.network.parameters(), "lr": args.lr},
                                   {"params": model.head.parameters(), "lr": args.head_lr}], weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (total - s) / max(1, total - warmup)))
    eval_every = max(1, steps_per_epoch // args.evals_per_epoch)
    best = (-1.0, 0.0, None, 0)
    history = []
    eval_cpu = 0.0
    start_cpu, start_wall = bench.cpu_seconds(), time.time()
    step = 0
    for epoch in range(args.epochs):
        order = list(range(len(examples)))
        rng.shuffle(order)
        for s in range(0, len(order), args.batch_size):
            model.train()
            batch = [examples[i] for i in order[s:s + args.batch_size]]
            ids, mask = batch_tensors([p for p, _ in batch])
            loss = torch.nn.functional.cross_entropy(model(ids, mask), torch.tensor([y for _, y in batch]))
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            step += 1
            if step % eval_every == 0 or step == total:
                c0 = bench.cpu_seconds()
                dev_scorer.fill(model)
                m = max((rerank_rankings(data, dev_lists, args.early_k, dev_scorer.score, w) for w in weights),
                        key=lambda m: (m["P@R"], -m["Hard@R"]))
                eval_cpu += bench.cpu_seconds() - c0
                history.append({"step": step, "epoch": round(step / steps_per_epoch, 2), "loss": round(float(loss), 4),
                                "dev P@R": round(m["P@R"], 4), "dev Hard@R": round(m["Hard@R"], 4)})
                log(f"  {head} step {step}/{total} loss {float(loss):.4f} dev P@R {m['P@R']:.4f} "
                    f"Hard@R {m['Hard@R']:.4f} ({time.time() - start_wall:.0f} s)")
                if (m["P@R"], -m["Hard@R"]) > (best[0], best[1]):
                    best = (m["P@R"], -m["Hard@R"], copy.deepcopy(model.state_dict()), step)
        if time.time() - start_wall > args.max_minutes * 60:
            log(f"  {head}: stopped after epoch {epoch + 1} (--max-minutes {args.max_minutes})")
            break
    cpu = bench.cpu_seconds() - start_cpu
    model.load_state_dict(best[2])
    info = {"examples": len(examples), "steps": step, "best_step": best[3], "history": history,
            "train_cpu_s": round(cpu - eval_cpu, 1), "early_stop_eval_cpu_s": round(eval_cpu, 1),
            "wall_s": round(time.time() - start_wall, 1)}
    return model, info


def stage2_cost(model, scorer, lists, k, queries=10):
    """One query's stage 2 on 1 thread: its top-k pairs in one forward pass (tokens ready); the
    median over `queries` of the CPU ms (robust to other jobs on the cores) and of the wall ms."""
    torch.set_num_threads(1)
    model.eval()
    cpu, wall = [], []
    position = {key: i for i, key in enumerate(scorer.keys)}
    for (ti, q), (ids, _) in list(lists.items())[:queries]:
        t, m = batch_tensors([scorer.pairs[position[scorer.key(ti, q, d)]] for d in ids[:k]])
        with torch.no_grad():
            if not cpu:
                model(t, m)  # warm-up
            c0, w0 = time.process_time(), time.perf_counter()
            model(t, m)
            cpu.append((time.process_time() - c0) * 1e3)
            wall.append((time.perf_counter() - w0) * 1e3)
    return round(statistics.median(cpu), 1), round(statistics.median(wall), 1)


def dev_stance_accuracy(data, scorer):
    """Share of the scored same-topic (topic, claim) pairs whose larger of P(pro), P(con) is the
    claim's stance."""
    hits = total = 0
    for (first, d), p in scorer.probs.items():
        topic, stance = data.label[d]
        if data.topic_text[topic] != first:
            continue
        hits += int((p[0] > p[1]) == (stance == "pro"))
        total += 1
    return round(hits / total, 4) if total else None


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(bench.DATA / "ibm-claim-stance"))
    parser.add_argument("--train-qrels", help="default DATA/qrels/train.tsv")
    parser.add_argument("--eval-qrels", help="default DATA/qrels/test.tsv (read only with --test)")
    parser.add_argument("--dev-topics", type=int, default=5)
    parser.add_argument("--model", default=str(bench.MODELS / "all-minilm-l6-v2"))
    parser.add_argument("--heads", default="stance2,stance3", help=f"comma-separated, of {', '.join(HEADS)}")
    parser.add_argument("--depths", default="20,50,100", help="stage-1 candidates K reordered by stage 2")
    parser.add_argument("--weights", default="0,0.5,1,2", help="w of P + w * minmax(cos)")
    parser.add_argument("--accuracies", default="0.6,0.7,0.8,0.9",
                        help="simulated stance stages (topic known, stance right with this probability) at K >= 100")
    parser.add_argument("--early-k", type=int, default=50,
                        help="K of the dev P@R (best over --weights) that early stopping reads")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--head-lr", type=float, default=1e-3)
    parser.add_argument("--max-length", type=int, default=96)
    parser.add_argument("--unrelated-ratio", type=float, default=0.5)
    parser.add_argument("--evals-per-epoch", type=int, default=2)
    parser.add_argument("--max-minutes", type=float, default=15)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", default="/tmp/stance_study")
    parser.add_argument("--es-triples", metavar="FILE",
                        help="write (topic, con claim, pro claim, topic id) triples of the fitting topics for "
                             "`counterpoint train sparsecl --triples FILE` and exit")
    parser.add_argument("--es", metavar="DIR", help="also rerank by cos +/- alpha * Hoyer(Es(topic) - Es(claim)) "
                        "with this Es (+ for attack, - for support)")
    parser.add_argument("--es-command", default="", help="the command that trained --es, recorded in its rows")
    parser.add_argument("--alphas", default="0.1,0.25,0.5,1,2", help="alpha grid of the Hoyer rows")
    parser.add_argument("--verifiers", default="", help="also train map verifiers on stance labels: comma-separated "
                        "architectures, of cnn (F3), transformer (F4)")
    parser.add_argument("--verifier-epochs", type=int, default=6, help="at most (patience 2 on the dev AUC)")
    parser.add_argument("--verifier-batch-size", type=int, default=16, help="at most the 20 fitting topics (one per batch)")
    parser.add_argument("--test", action="store_true", help="score the test topics once, for the dev-chosen row")
    parser.add_argument("--results-name", default="stance_stage_study")
    args = parser.parse_args()
    args.train_qrels = args.train_qrels or str(Path(args.data) / "qrels" / "train.tsv")
    args.eval_qrels = args.eval_qrels or str(Path(args.data) / "qrels" / "test.tsv")
    heads = [h for h in args.heads.split(",") if h]
    for h in heads:
        if h not in HEADS:
            raise SystemExit(f"--heads: unknown head {h!r} (expected {', '.join(HEADS)})")
    verifiers = [a for a in args.verifiers.split(",") if a]
    for a in verifiers:
        if a not in ("cnn", "transformer"):
            raise SystemExit(f"--verifiers: unknown architecture {a!r} (expected cnn, transformer)")
    depths = [int(k) for k in args.depths.split(",")]
    weights = [float(w) for w in args.weights.split(",")]
    torch.set_num_threads(args.threads)
    Path(args.cache).mkdir(parents=True, exist_ok=True)
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    command = bench.command_line(f"nice -n 15 {bench.this_python()}", __file__)

    cp = bench.import_counterpoint()
    data = StanceSet(cp, args.data, args.train_qrels, args.eval_qrels, args.dev_topics)
    if args.es_triples:
        write_es_triples(data, args.es_triples, random.Random(args.seed))
        return
    log(f"fitting topics {len(data.fit_topics)} ({sum(len(data.claims_of[t]) for t in data.fit_topics)} claims), "
        f"dev topics {' '.join(data.dev_topics)}")
    docs, qemb, plain_topics = stage1(cp, data, args.model, args.cache, args.threads)
    tokens = PairTokens(cp.Encoder.load(str(args.model), threads=1), args.max_length)
    deepest = max(depths + [args.early_k])
    dev_lists = candidate_lists(data, docs, qemb, "dev", deepest)

    rows = []
    base = rerank_rankings(data, dev_lists, 1, lambda *a: 0.0, 0.0)
    rows.append({"configuration": "stage 1 alone: zero-shot dense (the table's dev row)", "head": None, "K": None,
                 "w": None, "dev": base, "train_cpu_s": 0, "command": command, "seed": args.seed})
    oracle = lambda ti, q, d: float(data.label[d] == data.queries[q][:2])  # noqa: E731
    for k in depths:
        rows.append({"configuration": f"ceiling: stage 1 top {k} with a perfect stance stage", "head": "oracle",
                     "K": k, "w": 0.0, "dev": rerank_rankings(data, dev_lists, k, oracle, 0.0), "train_cpu_s": 0,
                     "command": command, "seed": args.seed})
    # What a stance stage of a given accuracy would give: topic known, each same-topic claim's stance
    # judged right with probability a (seeded draws, mean of 5), stage-1 order kept among ties.
    for a in [float(x) for x in args.accuracies.split(",") if x]:
        for k in [k for k in depths if k >= 100]:
            runs = []
            for s in range(5):
                flip = {}
                rng = random.Random(args.seed * 1000 + s)

                def noisy(ti, q, d):
                    topic, stance = data.queries[q][:2]
                    if data.label[d][0] != topic:
                        return 0.0
                    key = (q, d)
                    if key not in flip:
                        flip[key] = rng.random() >= a
                    return float((data.label[d][1] == stance) != flip[key])
                runs.append(rerank_rankings(data, dev_lists, k, noisy, 0.0))
            rows.append({"configuration": f"simulated: topic known, stance right with probability {a:g}, stage 1 top {k}",
                         "head": "simulated", "K": k, "w": 0.0, "dev": {m: float(np.mean([r[m] for r in runs])) for m in METRICS},
                         "train_cpu_s": 0, "command": command, "seed": args.seed})
    models, scorers, infos = {}, {}, {}
    for head in heads:
        scorer = PoolScorer(data, head, tokens, dev_lists)
        log(f"{head}: {len(scorer.pairs)} dev pairs")
        settings = {k: getattr(args, k) for k in ("epochs", "batch_size", "lr", "head_lr", "max_length",
                                                  "unrelated_ratio", "evals_per_epoch", "early_k", "max_minutes",
                                                  "seed", "dev_topics")}
        key = hashlib.sha256(json.dumps([head, settings, args.weights, stage1_key(args.model)], sort_keys=True).encode()).hexdigest()
        cached = Path(args.cache) / f"cross-encoder-{head}-{key[:16]}.pt"
        if cached.exists():
            saved = torch.load(cached)
            model = CrossEncoder(torch.jit.load(str(Path(args.model) / "model.pt")), saved["dim"], HEADS[head])
            model.load_state_dict(saved["state"])
            info = saved["info"]
            log(f"{head}: trained network read from {cached}")
        else:
            model, info = train(args, data, head, tokens, plain_topics, docs, scorer, dev_lists, weights, log)
            torch.save({"state": model.state_dict(), "info": info, "dim": model.head.in_features}, cached)
        scorer.fill(model)
        models[head], scorers[head], infos[head] = model, scorer, info
        for k in depths:
            for w in weights:
                rows.append({"configuration": f"cross-encoder {head}, stage 1 top {k}, w {w:g}", "head": head, "K": k,
                             "w": w, "dev": rerank_rankings(data, dev_lists, k, scorer.score, w),
                             "train_cpu_s": info["train_cpu_s"], "command": command, "seed": args.seed})
        info["dev_stance_accuracy"] = dev_stance_accuracy(data, scorer)
        for k in depths:
            info[f"stage2_cpu_ms_K{k}"], info[f"stage2_wall_ms_K{k}"] = stage2_cost(model, scorer, dev_lists, k)
        torch.set_num_threads(args.threads)
        log(f"{head}: {json.dumps({k: v for k, v in info.items() if k != 'history'})}")

    for architecture in verifiers:
        verifier, info = train_stance_verifier(cp, args, data, architecture, log)
        models[f"verifier-{architecture}"] = verifier
        scorer = VerifierScorer(cp, data, cp.Encoder.load(str(args.model), threads=args.threads), dev_lists)
        scorer.fill(verifier)
        info["dev_stance_auc"] = scorer.stance_auc()
        infos[f"verifier {architecture}"] = info
        log(f"verifier {architecture}: dev stance AUC {info['dev_stance_auc']}")
        for k in depths:
            for w in weights:
                rows.append({"configuration": f"map verifier {architecture} (stance labels), stage 1 top {k}, w {w:g}",
                             "head": f"verifier-{architecture}", "K": k, "w": w,
                             "dev": rerank_rankings(data, dev_lists, k, scorer.score, w),
                             "train_cpu_s": info["train_cpu_s"], "command": command, "seed": args.seed})

    if args.es:
        es = cp.Encoder.load(str(args.es), threads=args.threads)
        es_topics = dict(zip(data.topic_text, es.encode(list(data.topic_text.values()), query=True, prefix="")))
        es_docs = dict(zip(data.doc_ids, es.encode([data.corpus[d] for d in data.doc_ids])))
        sign = {"pro": -1.0, "con": 1.0}
        hoyer = lambda ti, q, d: sign[data.queries[q][1]] * float(bench.hoyer_scores(  # noqa: E731
            es_topics[data.queries[q][0]], es_docs[d][None, :])[0])
        cos_of = {(ti, q, d): float(c) for (ti, q), (ids, cs) in dev_lists.items() for d, c in zip(ids, cs)}
        for k in depths:
            for alpha in [float(a) for a in args.alphas.split(",")]:
                # score = cos +/- alpha * Hoyer: raw cosine plus the signed term (w = 0, minmax unused)
                rows.append({"configuration": f"Hoyer: cos +/- {alpha:g} * Hoyer(Es), stage 1 top {k}",
                             "head": "hoyer", "K": k, "w": alpha,
                             "dev": rerank_rankings(data, dev_lists, k, lambda ti, q, d: cos_of[(ti, q, d)] + alpha * hoyer(ti, q, d), 0.0),
                             "train_cpu_s": None, "command": args.es_command or command, "seed": args.seed})

    trained = [r for r in rows if r["head"] in HEADS or str(r["head"]).startswith("verifier-")]
    chosen = max(trained, key=lambda r: (round(r["dev"]["P@R"], 6), -r["dev"]["Hard@R"])) if trained else None
    result = {"benchmark": "stance_stage_study", "set": "ibm-claim-stance", "model": Path(args.model).name,
              "dev_topics": data.dev_topics, "fit_topics": data.fit_topics, "command": command, "seed": args.seed,
              "args": vars(args), "rows": rows, "training": infos, "chosen": None, "test": None}
    if chosen:
        chosen["chosen"] = True
        result["chosen"] = chosen["configuration"]
        if args.test:
            test_lists = candidate_lists(data, docs, qemb, "test", chosen["K"])
            base_test = rerank_rankings(data, test_lists, 1, lambda *a: 0.0, 0.0)
            if chosen["head"] in HEADS:
                scorer = PoolScorer(data, chosen["head"], tokens, test_lists)
            else:
                scorer = VerifierScorer(cp, data, cp.Encoder.load(str(args.model), threads=args.threads), test_lists)
            scorer.fill(models[chosen["head"]])
            result["test"] = {"configuration": chosen["configuration"],
                              "test": rerank_rankings(data, test_lists, chosen["K"], scorer.score, chosen["w"]),
                              "stage 1 alone (zero-shot dense)": base_test}
    out = bench.RESULTS / args.results_name
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(result, args, infos))
    print(markdown(result, args, infos))


def markdown(result, args, infos):
    f = lambda x: f"{x:.4f}"  # noqa: E731
    lines = [f"# A trained stance stage over dense recall, IBM Debater Claim Stance, {result['model']} (dev topics)", "",
             f"Dev topics {' '.join(result['dev_topics'])} (10 queries); fitting topics: the other "
             f"{len(result['fit_topics'])} training topics. Held-out instruction templates, mean of the two. "
             f"Stage 2 = cross-encoder over \"[CLS] topic [SEP] claim [SEP]\" reordering stage 1's top K by "
             f"P + w * minmax(cos); seed {result['seed']}, {args.epochs} epochs, batch {args.batch_size}, lr "
             f"{args.lr:g} (head {args.head_lr:g}), max length {args.max_length}, early-stopped on dev P@R at K "
             f"{args.early_k} (best w). Goal (issue #30): P@R >= 0.60, Hard@R <= 0.20, Semi@R <= zero-shot's.", "",
             *([f"Map verifier rows: the library's `train_verifier` ({args.verifiers}) over token-token cosine maps of "
                f"the frozen encoder (topic against claim), trained on the fitting topics' (topic, con claim, pro claim) "
                f"triples, {args.verifier_epochs} epochs at most, batch {args.verifier_batch_size}, early-stopped on the "
                f"ROC-AUC of the dev topics' own claims (con accepted); support reads the score negated; scores "
                f"standardised over the pool, then + w * minmax(cos).", ""] if args.verifiers else []),
             "| configuration | dev P@R | dev Hard@R | dev Semi@R | dev nDCG@10 | training CPU s | seed |",
             "|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        d = r["dev"]
        name = r["configuration"] + (" **(chosen on dev)**" if r.get("chosen") else "")
        lines.append(f"| {name} | {f(d['P@R'])} | {f(d['Hard@R'])} | {f(d['Semi@R'])} | {f(d['nDCG@10'])} | "
                     f"{'-' if r['train_cpu_s'] is None else r['train_cpu_s']} | {r['seed']} |")
    lines += ["", "Training and stage-2 cost per head (CPU seconds exclude the early-stopping evaluations, given "
              "apart; stage2_cpu_ms / stage2_wall_ms = median CPU / wall ms of one query's K pairs in one forward pass on "
              "1 thread, tokens ready; dev_stance_accuracy = pro/con judged right on the dev topics' own scored "
              "claims):", ""]
    for head, info in infos.items():
        lines.append(f"- {head}: " + ", ".join(f"{k} {v}" for k, v in info.items() if k != "history"))
    if result["test"]:
        t = result["test"]
        lines += ["", f"Test topics, once, for the dev-chosen configuration ({t['configuration']}):", "",
                  "| configuration | test P@R | Hard@R | Semi@R | Easy@R | nDCG@10 |", "|---|---|---|---|---|---|"]
        for name, m in (("stage 1 alone (zero-shot dense)", t["stage 1 alone (zero-shot dense)"]),
                        (t["configuration"], t["test"])):
            lines.append(f"| {name} | " + " | ".join(f(m[k]) for k in METRICS) + " |")
    lines += ["", f"Command: `{result['command']}`", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
