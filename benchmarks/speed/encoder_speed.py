#!/usr/bin/python3
"""Throughput of one encoder implementation on the first N texts of a BEIR corpus, printed as one
JSON line (peak memory is measured from outside with /usr/bin/time -v by encoder_speed.sh).

  --impl cpp    the library's C++ encoder (counterpoint.Encoder: C++ tokenizer, length-sorted
                batches, TorchScript run from C++); Python only hands over the list of texts.
  --impl torch  the same TorchScript file driven from Python in a plain loop: batches in corpus
                order (unsorted), torch.jit.load + forward. Token ids come from the Python port
                of the tokenizer for USE-lite, from the library's tokenizer (Encoder.tokenize)
                for WordPiece models, before the clock starts."""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import DATA, MODELS, ROOT  # noqa: E402


def read_texts(corpus: Path, count: int):
    texts = []
    with open(corpus) as f:
        for line in f:
            row = json.loads(line)
            texts.append(f"{row.get('title') or ''} {row['text']}".strip())
            if len(texts) == count:
                return texts
    raise SystemExit(f"{corpus} holds only {len(texts)} documents, --count asks for {count}")


def run_cpp(texts, model_dir: Path, threads: int, batch: int):
    import counterpoint as cp
    encoder = cp.Encoder.load(str(model_dir), threads=threads)
    encoder.encode(texts[:batch], batch_size=batch)  # warm-up
    started = time.perf_counter()
    encoder.encode(texts, batch_size=batch)
    return time.perf_counter() - started


def run_torch(texts, model_dir: Path, threads: int, batch: int):
    import torch
    torch.set_num_threads(threads)
    manifest = json.loads((model_dir / "manifest.json").read_text())
    max_length = manifest["max_length"]
    if manifest["tokenizer"]["kind"] == "use-unigram":
        sys.path.insert(0, str(ROOT / "models" / "use_lite"))
        from use_lite_tokenizer import UseLiteTokenizer
        tokenizer = UseLiteTokenizer.from_file(str(model_dir / manifest["tokenizer"]["file"]))
        tokenize = lambda chunk: [tokenizer.encode(t)[:max_length] for t in chunk]
    else:
        import counterpoint as cp
        library = cp.Encoder.load(str(model_dir), threads=threads)
        tokenize = lambda chunk: library.tokenize(chunk, max_length=max_length)
    module = torch.jit.load(str(model_dir / "model.pt")).eval()

    def encode(chunk):
        ids = tokenize(chunk)
        width = max(1, max(len(i) for i in ids))
        input_ids = torch.zeros(len(ids), width, dtype=torch.int64)
        mask = torch.zeros(len(ids), width, dtype=torch.int64)
        for r, row in enumerate(ids):
            input_ids[r, :len(row)] = torch.tensor(row, dtype=torch.int64)
            mask[r, :len(row)] = 1
        with torch.inference_mode():
            return module(input_ids, mask)[1]

    encode(texts[:batch])  # warm-up
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        encode(texts[start:start + batch])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--impl", choices=["cpp", "torch"], required=True)
    parser.add_argument("--corpus", default=str(DATA / "arguana/corpus.jsonl"))
    parser.add_argument("--model", default=str(MODELS / "all-minilm-l6-v2"))
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.count <= 0 or args.batch <= 0 or args.threads <= 0:
        raise SystemExit("--count, --batch and --threads must be positive")
    texts = read_texts(Path(args.corpus), args.count)
    seconds = (run_cpp if args.impl == "cpp" else run_torch)(texts, Path(args.model), args.threads, args.batch)
    print(json.dumps({"impl": args.impl, "documents": len(texts), "batch": args.batch, "threads": args.threads,
                      "seconds": round(seconds, 3), "docs_per_second": round(len(texts) / seconds, 1)}))


if __name__ == "__main__":
    main()
