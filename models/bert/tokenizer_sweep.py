"""Compares the library's WordPiece ids with Hugging Face `tokenizers` (the fast tokenizer that
sentence-transformers uses) on every text of a data folder in BEIR layout: corpus titles and
texts and query texts of each set. Prints, per set, how many texts give identical ids
(untruncated, special tokens included) and lists the first differences.

Runs outside CI, in the reference venv (models/bert/tokenizer_sweep.sh sets it up):

  python tokenizer_sweep.py --hf-dir CHECKPOINT --model-dir MODEL_DIR --data-dir ../shared/data
"""
import argparse
import glob
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def texts_of(set_dir):
    texts = []
    for name in ("corpus.jsonl", "queries.jsonl"):
        path = os.path.join(set_dir, name)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    row = json.loads(line)
                    texts += [t for t in (row.get("title", ""), row.get("text", "")) if t]
    return texts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hf-dir", required=True, help="checkpoint folder with tokenizer.json")
    parser.add_argument("--model-dir", required=True, help="the converted counterpoint model directory")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--show", type=int, default=5, help="differences to print per set")
    args = parser.parse_args(argv)

    sys.path.insert(0, os.path.join(REPO, "python"))
    import counterpoint as cp
    from transformers import AutoTokenizer

    reference = AutoTokenizer.from_pretrained(args.hf_dir)
    if not reference.is_fast:
        sys.exit("tokenizer_sweep.py: the reference tokenizer is not the Hugging Face `tokenizers` one")
    encoder = cp.Encoder.load(args.model_dir)
    total = same = 0
    for set_dir in sorted(glob.glob(os.path.join(args.data_dir, "*", ""))):
        texts = texts_of(set_dir)
        if not texts:
            continue
        expected = reference(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        actual = encoder.tokenize(texts)
        differing = [i for i, (a, e) in enumerate(zip(actual, expected)) if a != e]
        total += len(texts)
        same += len(texts) - len(differing)
        name = os.path.basename(os.path.normpath(set_dir))
        print(f"{name}: {len(texts) - len(differing)} of {len(texts)} texts give identical ids")
        for i in differing[: args.show]:
            print(f"  differs: {texts[i][:100]!r}")
    print(f"all sets: {same} of {total} texts identical ({100.0 * same / max(total, 1):.2f}%)")
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())
