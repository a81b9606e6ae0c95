#!/usr/bin/python3
"""Dynamic int8 quantisation of a BERT-family encoder (the default E, all-minilm-l6-v2), measured
against its float32 network on the gates the library sets for shipping an int8 variant: encoding
speed >= 1.5x float32, per-text cosine to the float32 embedding min >= 0.98 and mean >= 0.995, and
nDCG@10 within 0.005 (cosine search on SICK dev).

Each variant is `torch.quantization.quantize_dynamic` over the network's nn.Linear layers (int8
weights, activations quantised per batch at run time), on the quantized engines this torch build
offers (Debian's torch 1.13 has onednn and qnnpack, no fbgemm), then scripted as model-int8.pt would
be. The network is rebuilt eagerly from the installed model.pt (same weights), token ids come from
the library's tokenizer (Encoder.tokenize) before any clock starts, batches are length-sorted as the
library's encoder sorts them, and every variant encodes the same batches with the same threads.

Prints one table (markdown) and writes results/int8_encoder.{json,md}. Run with the project's venv:

    .venv/bin/python benchmarks/speed/int8_encoder.py [--threads 2] [--arguana-texts 300]
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
import bench  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, str(bench.ROOT / "models" / "bert"))
from bert_model import BertConfig, BertEncoder  # noqa: E402

SPEED_GATE, COSINE_MIN_GATE, COSINE_MEAN_GATE, NDCG_GATE = 1.5, 0.98, 0.995, 0.005


def eager_network(model_dir: Path, manifest: dict) -> BertEncoder:
    """The installed TorchScript network rebuilt as an eager BertEncoder with the same weights
    (quantize_dynamic needs eager modules)."""
    scripted = torch.jit.load(str(model_dir / manifest["model_file"]))
    state = scripted.state_dict()
    layers = len({k.split(".")[1] for k in state if k.startswith("layers.")})
    first = getattr(scripted.layers, "0")
    config = BertConfig(
        vocab_size=state["word_embeddings.weight"].shape[0], hidden_size=state["word_embeddings.weight"].shape[1],
        num_hidden_layers=layers, num_attention_heads=int(first.num_heads),
        intermediate_size=state["layers.0.intermediate.weight"].shape[0],
        max_position_embeddings=state["position_embeddings.weight"].shape[0],
        type_vocab_size=state["token_type_embeddings.weight"].shape[0], hidden_act=str(first.activation),
        layer_norm_eps=float(first.attention_norm.eps))
    network = BertEncoder(config, str(scripted.pooling))
    network.load_state_dict(state)
    return network.eval()


def variants(network: BertEncoder):
    """name -> (engine, the quantised network, scripted). Per-tensor weights on each engine;
    per-channel weights; per-channel with each layer's FFN output projection kept in float32 (its
    input, the GELU activations, has the widest range, which per-batch activation scales fit worst)."""
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig
    linear = [name for name, module in network.named_modules() if isinstance(module, torch.nn.Linear)]
    recipes = {
        "qnnpack, per-tensor": ("qnnpack", {name: default_dynamic_qconfig for name in linear}),
        "onednn, per-tensor": ("onednn", {name: default_dynamic_qconfig for name in linear}),
        "onednn, per-channel": ("onednn", {name: per_channel_dynamic_qconfig for name in linear}),
        "onednn, per-channel, FFN output float32": (
            "onednn", {name: per_channel_dynamic_qconfig for name in linear if not name.endswith(".output")}),
    }
    for name, (engine, spec) in recipes.items():
        if engine not in torch.backends.quantized.supported_engines:
            yield name, engine, None
            continue
        torch.backends.quantized.engine = engine
        quantized = torch.quantization.quantize_dynamic(network, spec, dtype=torch.qint8, inplace=False)
        yield name, engine, torch.jit.script(quantized)


def batches_of(ids, batch_size):
    """Length-sorted batches of padded (input_ids, attention_mask) and the original row of each text."""
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out = []
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        width = max(1, max(len(ids[i]) for i in rows))
        input_ids = torch.zeros(len(rows), width, dtype=torch.int64)
        mask = torch.zeros(len(rows), width, dtype=torch.int64)
        for r, i in enumerate(rows):
            input_ids[r, :len(ids[i])] = torch.tensor(ids[i], dtype=torch.int64)
            mask[r, :len(ids[i])] = 1
        out.append((rows, input_ids, mask))
    return out


def encode(module, batches, count):
    """Unit rows in the texts' order, wall and CPU seconds."""
    module(batches[0][1], batches[0][2])  # warm-up: the first call of a scripted module optimises it
    wall, cpu = time.perf_counter(), bench.cpu_seconds()
    with torch.no_grad():
        parts = [(r, module(i, m)[1]) for r, i, m in batches]
    wall, cpu = time.perf_counter() - wall, bench.cpu_seconds() - cpu
    rows = np.zeros((count, parts[0][1].shape[1]), dtype=np.float32)
    for r, pooled in parts:
        rows[r] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
    return rows, wall, cpu


def ndcg_at_10(cp, doc_rows, query_rows, doc_ids, query_ids, qrels):
    scores = query_rows @ doc_rows.T
    top = np.argsort(-scores, axis=1)[:, :11]  # one more than 10: cp.evaluate drops the query's own id
    run = {q: {doc_ids[j]: float(scores[n, j]) for j in top[n]} for n, q in enumerate(query_ids)}
    return cp.evaluate(run, qrels, ["ndcg@10"])["ndcg@10"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="all-minilm-l6-v2")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--arguana-texts", type=int, default=300, help="first N ArguAna documents (speed, cosine)")
    parser.add_argument("--data-dir", default=str(bench.DATA))
    parser.add_argument("--sick-qrels", default=None, help="default: DATA/sick/qrels/dev.tsv")
    parser.add_argument("--out", default=str(bench.RESULTS / "int8_encoder"))
    args = parser.parse_args(argv)
    for name in ("threads", "batch_size", "arguana_texts"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    data = Path(args.data_dir)
    sick_qrels_path = Path(args.sick_qrels or data / "sick" / "qrels" / "dev.tsv")
    for path in (data / "arguana" / "corpus.jsonl", data / "sick" / "corpus.jsonl", sick_qrels_path):
        if not path.exists():
            parser.error(f"{path} does not exist")
    cp = bench.import_counterpoint()
    torch.set_num_threads(args.threads)
    started_cpu, started = bench.cpu_seconds(), time.perf_counter()

    model_dir = Path(cp.Encoder.load(args.model).directory)
    manifest = json.loads((model_dir / "manifest.json").read_text())
    library = cp.Encoder.load(str(model_dir), threads=args.threads)
    network = eager_network(model_dir, manifest)

    arguana = [d.encoding_text for d in cp.load_corpus(data / "arguana")][:args.arguana_texts]
    sick_corpus = {d.id: d.encoding_text for d in cp.load_corpus(data / "sick")}
    sick_qrels = cp.load_qrels(sick_qrels_path)
    sick_queries = {q.id: q.text for q in cp.load_queries(data / "sick" / "queries.jsonl") if q.id in sick_qrels}
    sick_texts = list(sick_corpus.values()) + list(sick_queries.values())
    sets = {"arguana": arguana, "sick": sick_texts}
    batches = {name: batches_of(library.tokenize(texts, max_length=manifest["max_length"]), args.batch_size)
               for name, texts in sets.items()}

    float32 = {name: encode(torch.jit.script(network), batches[name], len(sets[name])) for name in sets}
    n_docs = len(sick_corpus)
    doc_ids, query_ids = list(sick_corpus), list(sick_queries)

    def sick_ndcg(rows):
        return ndcg_at_10(cp, rows[:n_docs], rows[n_docs:], doc_ids, query_ids, sick_qrels)

    reference_ndcg = sick_ndcg(float32["sick"][0])
    results = []
    for name, engine, module in variants(network):
        if module is None:
            results.append({"variant": name, "engine": engine, "available": False})
            continue
        row = {"variant": name, "engine": engine, "available": True}
        for set_name in sets:
            rows, wall, cpu = encode(module, batches[set_name], len(sets[set_name]))
            ref_rows, ref_wall, ref_cpu = float32[set_name]
            cosine = np.sum(rows * ref_rows, axis=1)
            row[set_name] = {"speed_ratio": ref_wall / wall, "cpu_ratio": ref_cpu / cpu, "wall_s": wall,
                             "float32_wall_s": ref_wall, "cosine_min": float(cosine.min()),
                             "cosine_mean": float(cosine.mean())}
            if set_name == "sick":
                row["sick"]["ndcg@10"] = sick_ndcg(rows)
                row["sick"]["ndcg_difference"] = row["sick"]["ndcg@10"] - reference_ndcg
        failed = []
        if min(row[s]["speed_ratio"] for s in sets) < SPEED_GATE:
            failed.append(f"speed < {SPEED_GATE}x")
        if min(row[s]["cosine_min"] for s in sets) < COSINE_MIN_GATE:
            failed.append(f"cosine min < {COSINE_MIN_GATE}")
        if min(row[s]["cosine_mean"] for s in sets) < COSINE_MEAN_GATE:
            failed.append(f"cosine mean < {COSINE_MEAN_GATE}")
        if abs(row["sick"]["ndcg_difference"]) > NDCG_GATE:
            failed.append(f"nDCG@10 moved by more than {NDCG_GATE}")
        row["passes"] = not failed
        row["fails"] = failed
        results.append(row)
        print(f"{name}: {json.dumps(row)}", file=sys.stderr, flush=True)

    report = {
        "command": bench.command_line(bench.this_python(), __file__),
        "model": args.model, "threads": args.threads, "batch_size": args.batch_size,
        "torch": torch.__version__, "engines": list(torch.backends.quantized.supported_engines),
        "texts": {"arguana": len(arguana), "sick": len(sick_texts)}, "sick_ndcg@10_float32": reference_ndcg,
        "gates": {"speed": SPEED_GATE, "cosine_min": COSINE_MIN_GATE, "cosine_mean": COSINE_MEAN_GATE,
                  "ndcg_difference": NDCG_GATE},
        "variants": results, "cpu_seconds": bench.cpu_seconds() - started_cpu,
        "wall_seconds": time.perf_counter() - started}
    lines = [
        f"# int8 encoder ({args.model}, dynamic quantisation of the Linear layers)", "",
        f"Command: `{report['command']}`  ",
        f"torch {torch.__version__}, quantized engines {', '.join(report['engines'])}; {args.threads} threads, "
        f"batch {args.batch_size}, length-sorted batches; ArguAna: first {len(arguana)} documents; SICK: "
        f"{n_docs} documents + {len(query_ids)} dev queries (float32 nDCG@10 {reference_ndcg:.4f}). "
        f"{report['cpu_seconds']:.0f} CPU-s, {report['wall_seconds']:.0f} s wall.", "",
        f"Gates: speed >= {SPEED_GATE}x float32 on both sets, per-text cosine to float32 min >= {COSINE_MIN_GATE} "
        f"and mean >= {COSINE_MEAN_GATE}, SICK dev nDCG@10 within {NDCG_GATE}.", "",
        "| variant | ArguAna speed | ArguAna cosine min / mean | SICK speed | SICK cosine min / mean | "
        "SICK dev nDCG@10 (diff) | passes |",
        "|---|---|---|---|---|---|---|"]
    for row in results:
        if not row["available"]:
            lines.append(f"| {row['variant']} | engine {row['engine']} not in this torch | | | | | no |")
            continue
        a, s = row["arguana"], row["sick"]
        lines.append(
            f"| {row['variant']} | {a['speed_ratio']:.2f}x | {a['cosine_min']:.4f} / {a['cosine_mean']:.4f} | "
            f"{s['speed_ratio']:.2f}x | {s['cosine_min']:.4f} / {s['cosine_mean']:.4f} | "
            f"{s['ndcg@10']:.4f} ({s['ndcg_difference']:+.4f}) | "
            f"{'yes' if row['passes'] else 'no: ' + ', '.join(row['fails'])} |")
    text = "\n".join(lines) + "\n"
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    out.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
