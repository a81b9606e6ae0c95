"""The full parity gate of an installed model against its reference implementation, outside CI:
on a fixed, seeded set of texts (the parity golden's hand-written and special-token strings,
the longest ArguAna arguments, which run past the model's maximum length, a seeded sample of the
other ArguAna arguments and of SICK sentences), the library's token ids must equal the Hugging
Face fast tokenizer's (untruncated, special tokens included) for every text, and its embeddings
must have a cosine of at least --min-cosine with sentence-transformers' (fp32, normalised) for
every text. Prints both figures with the wall and CPU seconds each side took; exit status 1 when
a gate fails.

Runs in the reference venv (models/bert/parity.sh sets it up):

  python parity.py --hf-dir CHECKPOINT --model-dir MODEL_DIR --data-dir ../shared/data [--texts 1000]
"""
import argparse
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from make_golden import HANDWRITTEN, SPECIAL_STRINGS  # noqa: E402


def _texts(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f if line.strip()]


def text_set(data_dir, count, seed=0):
    """`count` distinct texts: hostile strings, then the 150 longest ArguAna arguments, then a
    seeded sample split between the other ArguAna arguments and SICK sentences."""
    rng = random.Random(seed)
    arguana = sorted(set(_texts(os.path.join(data_dir, "arguana", "corpus.jsonl"))), key=lambda t: (-len(t), t))
    sick = sorted(set(_texts(os.path.join(data_dir, "sick", "corpus.jsonl"))))
    texts = list(dict.fromkeys(HANDWRITTEN + SPECIAL_STRINGS)) + arguana[:150]
    rest = count - len(texts)
    texts += rng.sample(arguana[150:], rest // 2) + rng.sample(sick, rest - rest // 2)
    return list(dict.fromkeys(texts))[:count]


def timed(call):
    wall, cpu = time.perf_counter(), time.process_time()
    result = call()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hf-dir", required=True, help="the original sentence-transformers folder")
    parser.add_argument("--model-dir", required=True, help="the converted counterpoint model directory")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--min-cosine", type=float, default=0.99999)
    args = parser.parse_args(argv)

    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer
    sys.path.insert(0, os.path.join(REPO, "python"))
    import counterpoint as cp

    torch.set_num_threads(args.threads)
    texts = text_set(args.data_dir, args.texts)
    reference = SentenceTransformer(args.hf_dir, device="cpu")
    if not getattr(reference.tokenizer, "is_fast", False):
        sys.exit("parity.py: the reference tokenizer is not the Hugging Face `tokenizers` one")
    encoder = cp.Encoder.load(args.model_dir, threads=args.threads)
    expected_ids = reference.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    ids = encoder.tokenize(texts)
    differing = [t for t, a, e in zip(texts, ids, expected_ids) if a != e]
    longest = max(len(i) for i in expected_ids)
    over = sum(len(i) > reference.max_seq_length for i in expected_ids)
    print(f"{len(texts)} texts ({over} longer than max_seq_length {reference.max_seq_length}, the longest "
          f"{longest} tokens): ids identical for {len(texts) - len(differing)} ({100.0 * (1 - len(differing) / len(texts)):.2f}%)")
    for t in differing[:5]:
        print(f"  ids differ: {t[:100]!r}")
    ours, wall_ours, cpu_ours = timed(lambda: encoder.encode(texts, batch_size=args.batch_size))
    theirs, wall_st, cpu_st = timed(lambda: reference.encode(texts, batch_size=args.batch_size, normalize_embeddings=True,
                                                              convert_to_numpy=True, show_progress_bar=False))
    ours, theirs = ours.astype(np.float64), theirs.astype(np.float64)
    cosines = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    worst = int(np.argmin(cosines))
    print(f"cosine to sentence-transformers: min {cosines.min():.7f} mean {cosines.mean():.7f} "
          f"(worst: {texts[worst][:80]!r})")
    print(f"encoding, {args.threads} threads, batch {args.batch_size}: counterpoint {wall_ours:.1f} s wall "
          f"{cpu_ours:.1f} CPU-s; sentence-transformers {wall_st:.1f} s wall {cpu_st:.1f} CPU-s")
    return 0 if not differing and cosines.min() >= args.min_cosine else 1


if __name__ == "__main__":
    sys.exit(main())
