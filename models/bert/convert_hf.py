#!/usr/bin/python3
"""Converts a Hugging Face style BERT-family checkpoint (config.json model_type "bert": bge,
gte, MiniLM, e5, UAE, ...; "mpnet": all-mpnet-base-v2, ...) into a counterpoint model directory:
model.pt (TorchScript of bert_model.BertEncoder or MPNetEncoder), vocab.txt and manifest.json
with the SHA-256 of each file. Needs torch and numpy only. Another model_type is refused by name.

The checkpoint directory holds config.json, model.safetensors or pytorch_model.bin, vocab.txt
or tokenizer.json (WordPiece), and optionally tokenizer_config.json (do_lower_case) and
special_tokens_map.json. The special tokens (cls, sep, pad, unk, mask, the added tokens a text
may spell, the separators between a pair's segments) come from tokenizer.json and the special
tokens map; the manifest records them unless they are BERT's.

usage: convert_hf.py --hf-dir DIR --out MODEL_DIR [--pooling cls|mean] [--name N]
                     [--max-length N] [--query-prefix S] [--document-prefix S] [--license L]
                     [--reference-ids FILE]

--reference-ids writes {"texts": TOKENIZER_PROBES, "ids": [...]}: the ids the checkpoint's own
tokenizer (Hugging Face's `tokenizers`, read from tokenizer.json, else vocab.txt) gives the probe
texts, special tokens included, so that the converted model's tokenizer can be checked against
them (install_model.py convert_folder does).
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
from bert_model import ENCODERS, FAMILIES, POOLINGS, BertConfig  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402

# Hugging Face names (after the family's optional prefix, "bert." or "mpnet.") -> encoder
# parameter names, per model_type: the embeddings and other weights outside the layers, then the
# modules of each encoder.layer.<i>.
_WEIGHT_NAMES = {
    "bert": {
        "outside": {
            "embeddings.word_embeddings.weight": "word_embeddings.weight",
            "embeddings.position_embeddings.weight": "position_embeddings.weight",
            "embeddings.token_type_embeddings.weight": "token_type_embeddings.weight",
            "embeddings.LayerNorm.weight": "embedding_norm.weight",
            "embeddings.LayerNorm.bias": "embedding_norm.bias",
        },
        "layer": {
            "attention.self.query": "query",
            "attention.self.key": "key",
            "attention.self.value": "value",
            "attention.output.dense": "attention_output",
            "attention.output.LayerNorm": "attention_norm",
            "intermediate.dense": "intermediate",
            "output.dense": "output",
            "output.LayerNorm": "output_norm",
        },
    },
    "mpnet": {
        "outside": {
            "embeddings.word_embeddings.weight": "word_embeddings.weight",
            "embeddings.position_embeddings.weight": "position_embeddings.weight",
            "embeddings.LayerNorm.weight": "embedding_norm.weight",
            "embeddings.LayerNorm.bias": "embedding_norm.bias",
            "encoder.relative_attention_bias.weight": "relative_position_embeddings.weight",
        },
        "layer": {
            "attention.attn.q": "query",
            "attention.attn.k": "key",
            "attention.attn.v": "value",
            "attention.attn.o": "attention_output",
            "attention.LayerNorm": "attention_norm",
            "intermediate.dense": "intermediate",
            "output.dense": "output",
            "output.LayerNorm": "output_norm",
        },
    },
}
assert set(_WEIGHT_NAMES) == set(FAMILIES) == set(ENCODERS)
_LAYER_PATTERN = re.compile(r"^encoder\.layer\.(\d+)\.(.+)\.(weight|bias)$")
# Weights a sentence encoder does not use: the pooler (its tanh head only serves the NSP
# objective), pre-training heads (BERT's cls.*, MPNet's lm_head.*), and buffers some exporters save.
_UNUSED = re.compile(r"^(pooler\.|cls\.|lm_head\.|embeddings\.position_ids$)")
# BERT's special tokens: a manifest that names none means these (every model converted before
# manifests named them), so a BERT checkpoint's manifest leaves them out.
BERT_SPECIALS = {"cls": "[CLS]", "sep": "[SEP]", "pad": "[PAD]", "unk": "[UNK]", "mask": "[MASK]"}


def _canonical_name(name, model_type="bert"):
    """Strips the family's prefix ("bert.", "mpnet.") and maps TF-era LayerNorm gamma/beta onto
    weight/bias."""
    prefix = FAMILIES[model_type]["prefix"]
    if name.startswith(prefix):
        name = name[len(prefix):]
    if name.endswith("LayerNorm.gamma"):
        name = name[:-len("gamma")] + "weight"
    elif name.endswith("LayerNorm.beta"):
        name = name[:-len("beta")] + "bias"
    return name


def map_weights(checkpoint, model_type="bert"):
    """{Hugging Face name: array} -> {encoder parameter name: array}, plus the names ignored
    as unused. ValueError listing every name that maps nowhere."""
    names = _WEIGHT_NAMES[model_type]
    mapped, ignored, unknown = {}, [], []
    for name, array in checkpoint.items():
        canonical = _canonical_name(name, model_type)
        target = names["outside"].get(canonical)
        if target is None:
            match = _LAYER_PATTERN.match(canonical)
            if match and match.group(2) in names["layer"]:
                target = f"layers.{match.group(1)}.{names['layer'][match.group(2)]}.{match.group(3)}"
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


def _json_file(hf_dir, name):
    path = os.path.join(hf_dir, name)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _token_content(value):
    """A special token as the special tokens map writes it: a string or {"content": ...}."""
    return value.get("content") if isinstance(value, dict) else value


def _template_specials(template, which, tokenizer_json):
    """The pieces a TemplateProcessing post-processor puts around the sequences of `which`
    ("single" or "pair"), as [piece, "A" / "B", ...]. ValueError for pieces of more than one id."""
    out = []
    for item in template.get(which) or []:
        if "SpecialToken" in item:
            name = item["SpecialToken"]["id"]
            tokens = (template.get("special_tokens") or {}).get(name, {}).get("tokens", [name])
            if len(tokens) != 1:
                raise ValueError(f"{tokenizer_json}: the post-processor's special token {name!r} is "
                                 f"{len(tokens)} tokens; one is supported")
            out.append(tokens[0])
        else:
            out.append(item["Sequence"]["id"])
    return out


def _check_tokenizer_pipeline(tokenizer, tokenizer_json, lowercase):
    """ValueError naming the part of tokenizer.json that the library's WordPiece (BERT's
    normalisation, pre-tokenisation and greedy longest-match-first) would not reproduce. A part
    left out is taken to be BERT's, as a checkpoint with vocab.txt alone is."""
    normalizer = tokenizer.get("normalizer") or {"type": "BertNormalizer", "lowercase": lowercase}
    if normalizer.get("type") != "BertNormalizer" or not normalizer.get("clean_text", True) \
            or not normalizer.get("handle_chinese_chars", True) \
            or normalizer.get("strip_accents") not in (None, normalizer.get("lowercase", True)) \
            or bool(normalizer.get("lowercase", True)) != lowercase:
        raise ValueError(f"{tokenizer_json}: normalizer {json.dumps(normalizer)} is not supported (BERT's "
                         f"BertNormalizer with clean_text, handle_chinese_chars, accents stripped as it lower-cases, "
                         f"and lower-casing as do_lower_case says: {lowercase})")
    pre = (tokenizer.get("pre_tokenizer") or {"type": "BertPreTokenizer"}).get("type")
    if pre != "BertPreTokenizer":
        raise ValueError(f"{tokenizer_json}: pre_tokenizer {pre!r} is not supported (BertPreTokenizer)")
    model = tokenizer.get("model") or {}
    if model.get("continuing_subword_prefix", "##") != "##" or model.get("max_input_chars_per_word", 100) != 100:
        raise ValueError(f"{tokenizer_json}: WordPiece with continuing_subword_prefix "
                         f"{model.get('continuing_subword_prefix')!r} and max_input_chars_per_word "
                         f"{model.get('max_input_chars_per_word')} is not supported ('##' and 100)")


def read_specials(hf_dir, pieces, model_type="bert", lowercase=True):
    """The manifest's tokenizer fields for the special tokens: {"specials": {cls, sep, pad, unk,
    mask}, "added_tokens": [{piece, normalized}], "pair_separators": 1 or 2}, or {} when they
    are BERT's (what a manifest without them means). Read from tokenizer.json (its post-processor,
    WordPiece unk_token and added tokens) and the special tokens map; a checkpoint with vocab.txt
    alone has BERT's. ValueError naming what the library cannot reproduce or the piece that the
    vocabulary lacks or holds at another id."""
    tokenizer_json = os.path.join(hf_dir, "tokenizer.json")
    tokenizer = _json_file(hf_dir, "tokenizer.json")
    if tokenizer is None:
        if model_type != "bert":
            raise ValueError(f"{hf_dir} has no tokenizer.json: a {model_type} checkpoint's special tokens "
                             f"are not BERT's, and only tokenizer.json says which they are")
        return {}
    _check_tokenizer_pipeline(tokenizer, tokenizer_json, lowercase)
    processor = tokenizer.get("post_processor") or {}
    kind = processor.get("type")
    if kind is None and model_type == "bert":
        cls, sep, separators = BERT_SPECIALS["cls"], BERT_SPECIALS["sep"], 1  # what BertTokenizer adds
    elif kind in ("BertProcessing", "RobertaProcessing"):
        cls, sep = processor["cls"][0], processor["sep"][0]
        separators = 1 if kind == "BertProcessing" else 2
    elif kind == "TemplateProcessing":
        single = _template_specials(processor, "single", tokenizer_json)
        pair = _template_specials(processor, "pair", tokenizer_json)
        if len(single) != 3 or single[1] != "A" or single[0] in ("A", "B") or single[2] in ("A", "B"):
            raise ValueError(f"{tokenizer_json}: the post-processor's single template {single} is not "
                             f"[cls, A, sep]")
        cls, sep = single[0], single[2]
        separators = next((n for n in (1, 2) if pair == [cls, "A"] + [sep] * n + ["B", sep]), None)
        if separators is None:
            raise ValueError(f"{tokenizer_json}: the post-processor's pair template {pair} is neither "
                             f"[cls, A, sep, B, sep] nor [cls, A, sep, sep, B, sep]")
    else:
        raise ValueError(f"{tokenizer_json}: post_processor {kind!r} is not supported (BertProcessing, "
                         f"RobertaProcessing or TemplateProcessing): the library could not add the special "
                         f"tokens the model was trained with")
    token_map = {**(_json_file(hf_dir, "tokenizer_config.json") or {}),
                 **(_json_file(hf_dir, "special_tokens_map.json") or {})}
    padding = tokenizer.get("padding") or {}
    specials = {
        "cls": cls, "sep": sep,
        "pad": padding.get("pad_token") or _token_content(token_map.get("pad_token")) or BERT_SPECIALS["pad"],
        "unk": (tokenizer.get("model") or {}).get("unk_token") or BERT_SPECIALS["unk"],
        # A map without mask_token (a tokenizer.json alone) leaves BERT's when the vocabulary has it.
        "mask": _token_content(token_map.get("mask_token")) or ("[MASK]" if "[MASK]" in pieces else ""),
    }
    ids = {piece: i for i, piece in enumerate(pieces)}
    for role, piece in specials.items():
        if piece and piece not in ids:
            raise ValueError(f"the vocabulary of {hf_dir} lacks the {role} token {piece!r} that "
                             f"{'tokenizer.json' if role in ('cls', 'sep', 'unk') else 'the special tokens map'} names")
    literals = []
    for token in tokenizer.get("added_tokens") or []:
        piece = token["content"]
        if ids.get(piece) != token["id"]:
            raise ValueError(f"{tokenizer_json}: added token {piece!r} has id {token['id']}, but the vocabulary "
                             + (f"holds it at {ids[piece]}" if piece in ids else "lacks it"))
        if token.get("single_word"):
            raise ValueError(f"{tokenizer_json}: added token {piece!r} is single_word, which is not supported")
        normalized = bool(token.get("normalized", False))
        if normalized and any(c.isspace() for c in piece):
            raise ValueError(f"{tokenizer_json}: normalized added token {piece!r} spans whitespace, which is not "
                             f"supported")
        # lstrip/rstrip (MPNet's <mask>) are not recorded: the whitespace they take from the text
        # beside the token gives no token under BERT's normalisation, so the ids do not depend on them.
        literals.append({"piece": piece, "normalized": normalized})
    bert_literals = {p for p in ("[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]") if p in ids}
    if "added_tokens" not in tokenizer and model_type == "bert":
        # A hand-written tokenizer.json of a BERT model, as vocab.txt alone: BERT's.
        literals = [{"piece": p, "normalized": False} for p in sorted(bert_literals)]
    if specials == BERT_SPECIALS and separators == 1 and not any(l["normalized"] for l in literals) \
            and {l["piece"] for l in literals} == bert_literals:
        return {}
    if not literals:
        raise ValueError(f"{tokenizer_json} lists no added tokens: the special tokens "
                         f"{', '.join(sorted(set(specials.values()) - {''}))} would be split when a text spells them")
    return {"specials": specials, "added_tokens": literals, "pair_separators": separators}


# Texts whose ids the converted tokenizer must reproduce before a converted folder is accepted:
# case and accents, punctuation and numbers, CJK, a final capital sigma, the special tokens spelled
# in the text, a word past WordPiece's 100 characters, symbols outside most vocabularies, whitespace
# and control characters.
TOKENIZER_PROBES = [
    "The quick brown fox jumps over the lazy dog.",
    "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00dcBER \u00c5ngstr\u00f6m",
    "Don't stop-believing: 3.14% of $1,000 (approx.) isn't 42!",
    "\u6c49\u5b57 and \u65e5\u672c\u8a9e mixed with English",
    "\u039f\u0394\u039f\u03a3 \u03a3\u038a\u03a3\u03a5\u03a6\u039f\u03a3",
    "A mask <mask> and [MASK], [CLS] [SEP] <s> </s> <pad> [UNK] spelled out",
    "pneumonoultramicroscopicsilicovolcanoconiosis " + "x" * 120,
    "emoji \U0001f642 and symbols \u2192 \u2264 \u00a7",
    "tabs\tnew\nlines\r\n and a control \x07 character",
    "",
]


# Exit statuses of main() that install_model.py tells apart: a folder the converter cannot take (its
# message names why), and a package the check needs that this interpreter lacks.
EXIT_UNSUPPORTED = 2
EXIT_MISSING_PACKAGE = 3


def require_tokenizers():
    """Hugging Face's `tokenizers` module; ImportError naming the package when it is missing."""
    try:
        import tokenizers  # noqa: PLC0415  (needed by the tokenizer check only)
    except ImportError:
        raise ImportError(f"checking the converted tokenizer needs Hugging Face's tokenizers package, which "
                          f"{sys.executable} lacks: pip install tokenizers") from None
    return tokenizers


def reference_ids(hf_dir, texts):
    """The ids the checkpoint's own tokenizer gives `texts` (special tokens included, nothing cut):
    Hugging Face's `tokenizers` on tokenizer.json, else its BERT WordPiece on vocab.txt with
    do_lower_case. ImportError naming the package when it is missing."""
    tokenizers = require_tokenizers()
    path = os.path.join(hf_dir, "tokenizer.json")
    if os.path.exists(path):
        tokenizer = tokenizers.Tokenizer.from_file(path)
        tokenizer.no_truncation()
        tokenizer.no_padding()
    else:
        tokenizer = tokenizers.BertWordPieceTokenizer.from_file(os.path.join(hf_dir, "vocab.txt"),
                                                                lowercase=read_lowercase(hf_dir))
    return [encoding.ids for encoding in tokenizer.encode_batch(list(texts), add_special_tokens=True)]


def read_max_length(hf_dir):
    """max_seq_length of sentence_bert_config.json (sentence-transformers' own limit), or None."""
    config = _json_file(hf_dir, "sentence_bert_config.json") or {}
    value = config.get("max_seq_length")
    return int(value) if value is not None else None


def read_st_pooling(hf_dir):
    """The pooling sentence-transformers' modules.json applies ("cls" or "mean") and whether it
    normalises, or (None, None) for a folder that is not a sentence-transformers model.
    ValueError for a pooling this library does not implement."""
    modules = _json_file(hf_dir, "modules.json")
    if not modules:
        return None, None
    pooling, normalize = None, False
    for module in modules:
        kind = module.get("type", "")
        if kind.endswith(".Pooling"):
            config = _json_file(os.path.join(hf_dir, module.get("path", "")), "config.json") or {}
            modes = [m for m in ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens",
                                 "weightedmean_tokens", "lasttoken") if config.get(f"pooling_mode_{m}")]
            if modes not in (["cls_token"], ["mean_tokens"]):
                raise ValueError(f"{hf_dir}: sentence-transformers pooling {'+'.join(modes) or 'none'} is not "
                                 f"supported (cls_token or mean_tokens)")
            pooling = "cls" if modes == ["cls_token"] else "mean"
        elif kind.endswith(".Normalize"):
            normalize = True
        elif not kind.endswith(".Transformer"):
            raise ValueError(f"{hf_dir}: sentence-transformers module {kind} is not supported (Transformer, "
                             f"Pooling, Normalize)")
    return pooling, normalize


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
        # weights_only=False: the file is the module this process just pickled (torch >= 2.6
        # loads only tensors by default).
        script = ("import sys, torch; sys.path.insert(0, sys.argv[3]); "
                  "torch.jit.script(torch.load(sys.argv[1], weights_only=False)).save(sys.argv[2])")
        subprocess.run([sys.executable, "-c", script, eager, path, os.path.dirname(os.path.abspath(__file__))],
                       env={**os.environ, "PYTHONHASHSEED": "0"}, check=True)


def read_config(hf_dir):
    """config.json as a BertConfig; FileNotFoundError or ValueError naming what is unsupported
    (an unknown model_type by name)."""
    config_path = os.path.join(hf_dir, "config.json")
    if not os.path.exists(config_path):
        raise FileNotFoundError(f"{hf_dir} has no config.json (not a Hugging Face or sentence-transformers folder)")
    with open(config_path, encoding="utf-8") as f:
        return BertConfig.from_hf(json.load(f))


def convert(hf_dir, out_dir, pooling=None, name=None, max_length=None, query_prefix="",
            document_prefix="", license="unknown", source=None):
    """Writes the model directory and returns its manifest (a dict). `pooling` and `max_length`
    default to what a sentence-transformers folder says (modules.json, sentence_bert_config.json),
    else cls and 512. `source` adds provenance fields (e.g. the package and wheel hash the
    checkpoint came from) to the manifest's `source`; its "upstream" replaces the default, the
    checkpoint directory's name."""
    config = read_config(hf_dir)
    st_pooling, _ = read_st_pooling(hf_dir)
    pooling = pooling or st_pooling or "cls"
    max_length = max_length or read_max_length(hf_dir) or 512
    if pooling not in POOLINGS:
        raise ValueError(f"pooling '{pooling}' is not supported (expected one of {', '.join(POOLINGS)})")
    if max_length < 3:
        raise ValueError(f"max_length {max_length} leaves no room for text besides [CLS] and [SEP]")
    pieces = read_vocabulary(hf_dir)
    lowercase = read_lowercase(hf_dir)
    specials = read_specials(hf_dir, pieces, config.model_type, lowercase)
    for special in (specials["specials"][r] for r in ("cls", "sep", "pad", "unk")) if specials else \
            ("[PAD]", "[UNK]", "[CLS]", "[SEP]"):
        if special not in pieces:
            raise ValueError(f"the vocabulary of {hf_dir} lacks {special}")
    if len(pieces) > config.vocab_size:
        raise ValueError(f"the vocabulary has {len(pieces)} pieces but config.json vocab_size is "
                         f"{config.vocab_size}: ids past the embedding table would crash")

    checkpoint, weights_path = read_checkpoint(hf_dir)
    mapped, ignored = map_weights(checkpoint, config.model_type)
    model = ENCODERS[config.model_type](config, pooling)
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
        "architecture": config.model_type,
        "embedding_dim": config.hidden_size,
        "token_dim": config.hidden_size,
        "pooling": pooling,
        "max_length": min(max_length, model.max_positions),
        "tokenizer": {"kind": "wordpiece", "file": "vocab.txt", "lowercase": lowercase, **specials},
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
    parser.add_argument("--pooling", choices=POOLINGS,
                        help="default: what a sentence-transformers folder's modules.json says, else cls")
    parser.add_argument("--name", help="model name in the manifest (default: the checkpoint directory name)")
    parser.add_argument("--max-length", type=int,
                        help="tokens per input, special tokens included (capped by the positions the network "
                             "embeds; default: sentence_bert_config.json's max_seq_length, else 512)")
    parser.add_argument("--query-prefix", default="")
    parser.add_argument("--document-prefix", default="")
    parser.add_argument("--license", default="unknown", help="licence of the upstream weights")
    parser.add_argument("--reference-ids", help="write the checkpoint tokenizer's ids of the probe texts here")
    args = parser.parse_args(argv)
    try:
        if args.reference_ids:
            require_tokenizers()  # before the conversion's work
        manifest = convert(args.hf_dir, args.out, args.pooling, args.name, args.max_length,
                           args.query_prefix, args.document_prefix, args.license)
        if args.reference_ids:
            # After convert(), which has checked the folder's tokenizer files and model type.
            probes = {"texts": TOKENIZER_PROBES, "ids": reference_ids(args.hf_dir, TOKENIZER_PROBES)}
            with open(args.reference_ids, "w", encoding="utf-8") as f:
                json.dump(probes, f, ensure_ascii=False)
    except ImportError as e:
        print(f"convert_hf.py: {e}", file=sys.stderr)
        sys.exit(EXIT_MISSING_PACKAGE)
    except (ValueError, FileNotFoundError) as e:
        print(f"convert_hf.py: {e}", file=sys.stderr)
        sys.exit(EXIT_UNSUPPORTED)
    print(f"wrote {args.out}: {manifest['name']}, {manifest['source']['layers']} layers, "
          f"dim {manifest['embedding_dim']}, pooling {manifest['pooling']}, "
          f"max_length {manifest['max_length']}")


if __name__ == "__main__":
    main()
