#!/usr/bin/python3
"""Writes a randomly initialised BERT or MPNet checkpoint in Hugging Face layout (config.json,
model.safetensors or pytorch_model.bin, vocab.txt, tokenizer_config.json; an MPNet one also
tokenizer.json and special_tokens_map.json, with MPNet's special tokens), for tests of the
converter and of the C++ encoder. The weights depend on --seed only (numpy's RandomState
stream is stable across versions), so a checkpoint can be regenerated bit for bit.

Weights are drawn wider than BERT's own initialisation (std 0.2, LayerNorm gains around 1)
so that a wrong index or transpose anywhere changes the outputs visibly.

usage: make_random_checkpoint.py --out DIR [--family bert|mpnet --hidden 32 --layers 2 --heads 4
       --intermediate 64 --vocab FILE --max-positions 64 --act gelu --seed 0 --dtype F32|F16|BF16
       --format safetensors|bin --no-bert-prefix --uppercase]
"""
import argparse
import json
import os
import string
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bert_model import ACTIVATIONS  # noqa: E402
from safetensors_io import write_safetensors  # noqa: E402

SPECIAL_PIECES = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# MPNet's vocabulary is BERT's behind <s> <pad> </s> <unk>, with <mask> last (all-mpnet-base-v2).
MPNET_HEAD = ["<s>", "<pad>", "</s>", "<unk>"]
MPNET_TAIL = ["<mask>"]
MPNET_PAD_ID = 1
MPNET_BUCKETS = 32


def default_vocabulary(family="bert"):
    """Special tokens, ASCII punctuation, letters, ##letters and digits: any lowercase ASCII
    text tokenises without [UNK]."""
    letters = list(string.ascii_lowercase)
    bert = (SPECIAL_PIECES + list(string.punctuation) + letters + ["##" + c for c in letters]
            + list(string.digits))
    return MPNET_HEAD + bert + MPNET_TAIL if family == "mpnet" else bert


def mpnet_tokenizer_json(pieces, lowercase=True):
    """tokenizer.json as all-mpnet-base-v2 ships it (RobertaProcessing: <s> a </s></s> b </s>;
    its added tokens, <unk> normalised and <mask> taking the whitespace on its left), over `pieces`."""
    ids = {p: i for i, p in enumerate(pieces)}
    added = [{"id": ids[p], "special": True, "content": p, "single_word": False, "lstrip": p == "<mask>",
              "rstrip": False, "normalized": p == "<unk>"} for p in ("<s>", "<pad>", "</s>", "<unk>", "[UNK]", "<mask>")]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": lowercase},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", ids["</s>"]], "cls": ["<s>", ids["<s>"]],
                           "trim_offsets": True, "add_prefix_space": False},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids},
    }


def random_weights(hidden, layers, intermediate, vocab_size, max_positions, seed, prefix="bert.", family="bert",
                   heads=4):
    """{Hugging Face name: float32 array}, including the pooler that real checkpoints carry."""
    rng = np.random.RandomState(seed)

    def matrix(*shape):
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    def bias(n):
        return (rng.standard_normal(n) * 0.1).astype(np.float32)

    def gain(n):
        return (1.0 + rng.standard_normal(n) * 0.1).astype(np.float32)

    mpnet = family == "mpnet"
    w = {
        "embeddings.word_embeddings.weight": matrix(vocab_size, hidden),
        "embeddings.position_embeddings.weight": matrix(max_positions, hidden),
    }
    if not mpnet:
        w["embeddings.token_type_embeddings.weight"] = matrix(2, hidden)
    w["embeddings.LayerNorm.weight"] = gain(hidden)
    w["embeddings.LayerNorm.bias"] = bias(hidden)
    if mpnet:
        # Drawn wide (std 1) so that a bias in the wrong bucket or on the wrong head shows.
        w["encoder.relative_attention_bias.weight"] = (rng.standard_normal((MPNET_BUCKETS, heads))).astype(np.float32)
    attention = (("attention.attn.q", "attention.attn.k", "attention.attn.v", "attention.attn.o") if mpnet else
                 ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"))
    attention_norm = "attention.LayerNorm" if mpnet else "attention.output.LayerNorm"
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for part in attention:
            w[p + part + ".weight"] = matrix(hidden, hidden)  # [out, in], as nn.Linear stores it
            w[p + part + ".bias"] = bias(hidden)
        w[p + attention_norm + ".weight"] = gain(hidden)
        w[p + attention_norm + ".bias"] = bias(hidden)
        w[p + "intermediate.dense.weight"] = matrix(intermediate, hidden)
        w[p + "intermediate.dense.bias"] = bias(intermediate)
        w[p + "output.dense.weight"] = matrix(hidden, intermediate)
        w[p + "output.dense.bias"] = bias(hidden)
        w[p + "output.LayerNorm.weight"] = gain(hidden)
        w[p + "output.LayerNorm.bias"] = bias(hidden)
    w["pooler.dense.weight"] = matrix(hidden, hidden)
    w["pooler.dense.bias"] = bias(hidden)
    return {prefix + name: array for name, array in w.items()}


def write_checkpoint(out, hidden=32, layers=2, heads=4, intermediate=64, pieces=None, max_positions=64,
                     act="gelu", seed=0, dtype="F32", weights_format="safetensors", bert_prefix=True,
                     lowercase=True, family="bert"):
    """Writes the checkpoint directory; returns the weights as written ({name: array}).
    `bert_prefix`: weight names carry the family's base-model prefix ("bert.", "mpnet.")."""
    if hidden % heads:
        raise ValueError(f"hidden {hidden} is not a multiple of heads {heads}")
    if act not in ACTIVATIONS:
        raise ValueError(f"act '{act}' is not one of {', '.join(ACTIVATIONS)}")
    if family not in ("bert", "mpnet"):
        raise ValueError(f"family '{family}' is not bert or mpnet")
    pieces = pieces if pieces is not None else default_vocabulary(family)
    weights = random_weights(hidden, layers, intermediate, len(pieces), max_positions, seed,
                             f"{family}." if bert_prefix else "", family, heads)
    numpy_dtype = {"F32": np.float32, "F16": np.float16, "BF16": None}[dtype]
    os.makedirs(out, exist_ok=True)
    if weights_format == "safetensors":
        if dtype == "BF16":
            raise ValueError("this writer stores F32 or F16 only (numpy has no bfloat16)")
        weights = {k: v.astype(numpy_dtype) for k, v in weights.items()}
        write_safetensors(os.path.join(out, "model.safetensors"), weights, {"format": "pt"})
    elif weights_format == "bin":
        import torch
        torch_dtype = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}[dtype]
        state = {k: torch.from_numpy(v).to(torch_dtype) for k, v in weights.items()}
        torch.save(state, os.path.join(out, "pytorch_model.bin"))
        weights = {k: v.float().numpy() for k, v in state.items()}
    else:
        raise ValueError(f"format '{weights_format}' is not safetensors or bin")
    if family == "mpnet":
        # layer_norm_eps as all-mpnet-base-v2's (1e-5, not BERT's 1e-12): the converter must read it.
        config = {
            "architectures": ["MPNetModel"], "model_type": "mpnet", "vocab_size": len(pieces),
            "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
            "intermediate_size": intermediate, "hidden_act": act, "max_position_embeddings": max_positions,
            "layer_norm_eps": 1e-5, "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
            "relative_attention_num_buckets": MPNET_BUCKETS, "initializer_range": 0.2,
            "pad_token_id": MPNET_PAD_ID, "bos_token_id": 0, "eos_token_id": 2,
        }
    else:
        config = {
            "architectures": ["BertModel"], "model_type": "bert", "vocab_size": len(pieces),
            "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
            "intermediate_size": intermediate, "hidden_act": act, "max_position_embeddings": max_positions,
            "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.1, "position_embedding_type": "absolute",
            "initializer_range": 0.2, "pad_token_id": 0,
        }
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(out, "vocab.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(p + "\n" for p in pieces))
    if family == "mpnet":
        with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump({"tokenizer_class": "MPNetTokenizer", "do_lower_case": lowercase, "bos_token": "<s>",
                       "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>", "unk_token": "[UNK]",
                       "pad_token": "<pad>", "mask_token": "<mask>", "model_max_length": max_positions - 2}, f, indent=2)
        with open(os.path.join(out, "special_tokens_map.json"), "w", encoding="utf-8") as f:
            json.dump({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "[UNK]", "sep_token": "</s>",
                       "pad_token": "<pad>", "cls_token": "<s>",
                       "mask_token": {"content": "<mask>", "single_word": False, "lstrip": True, "rstrip": False,
                                      "normalized": False}}, f, indent=2)
        with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(mpnet_tokenizer_json(pieces, lowercase), f, ensure_ascii=False)
    else:
        with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": lowercase,
                       "model_max_length": max_positions}, f, indent=2)
    return weights


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--family", choices=("bert", "mpnet"), default="bert", help="config.json model_type")
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--intermediate", type=int, default=64)
    parser.add_argument("--vocab", help="vocab.txt to use (default: specials, punctuation, letters, digits)")
    parser.add_argument("--max-positions", type=int, default=64)
    parser.add_argument("--act", choices=ACTIVATIONS, default="gelu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=("F32", "F16", "BF16"), default="F32")
    parser.add_argument("--format", choices=("safetensors", "bin"), default="safetensors")
    parser.add_argument("--no-bert-prefix", action="store_true", help='weight names without "bert." ("mpnet.")')
    parser.add_argument("--uppercase", action="store_true", help="do_lower_case false")
    args = parser.parse_args(argv)
    pieces = None
    if args.vocab:
        with open(args.vocab, encoding="utf-8") as f:
            pieces = [line.rstrip("\r\n") for line in f if line.rstrip("\r\n")]
    try:
        write_checkpoint(args.out, args.hidden, args.layers, args.heads, args.intermediate, pieces,
                         args.max_positions, args.act, args.seed, args.dtype, args.format,
                         not args.no_bert_prefix, not args.uppercase, args.family)
    except ValueError as e:
        sys.exit(f"make_random_checkpoint.py: {e}")


if __name__ == "__main__":
    main()
