"""Reading and writing the safetensors format with numpy only.

Layout: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor name to
{"dtype", "shape", "data_offsets": [begin, end]} (offsets into the data that follows the
header; an optional "__metadata__" maps strings to strings), then the raw little-endian data.
F32 and F16 map onto numpy dtypes; BF16 (which numpy lacks) is widened to float32 on reading.
"""
import json
import struct

import numpy as np

_NUMPY_DTYPES = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"),
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"), "I8": np.dtype("i1"),
    "U8": np.dtype("u1"), "BOOL": np.dtype("?"),
}
_BF16_BYTES = 2
# A header larger than this is not a weights file but damage (the reference reader uses 100 MB).
_MAX_HEADER_BYTES = 100_000_000


class SafetensorsError(ValueError):
    """The file is not a well-formed safetensors file."""


def _bf16_to_float32(raw):
    halves = np.frombuffer(raw, dtype="<u2").astype(np.uint32)
    return (halves << 16).view(np.float32)


def read_safetensors(path):
    """Returns ({name: numpy array}, metadata dict). BF16 tensors come back as float32."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise SafetensorsError(f"{path}: {len(blob)} bytes is too short for a safetensors header")
    (header_len,) = struct.unpack("<Q", blob[:8])
    if header_len > _MAX_HEADER_BYTES or 8 + header_len > len(blob):
        raise SafetensorsError(f"{path}: header length {header_len} exceeds the file size {len(blob)}")
    try:
        header = json.loads(blob[8:8 + header_len].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafetensorsError(f"{path}: header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    data = memoryview(blob)[8 + header_len:]
    tensors = {}
    for name, entry in header.items():
        try:
            dtype_name, shape, (begin, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
        except (TypeError, KeyError, ValueError):
            raise SafetensorsError(f"{path}: tensor '{name}' lacks dtype, shape or data_offsets") from None
        if dtype_name != "BF16" and dtype_name not in _NUMPY_DTYPES:
            raise SafetensorsError(f"{path}: tensor '{name}' has unsupported dtype {dtype_name}")
        itemsize = _BF16_BYTES if dtype_name == "BF16" else _NUMPY_DTYPES[dtype_name].itemsize
        count = int(np.prod(shape, dtype=np.int64))
        if not (0 <= begin <= end <= len(data)) or end - begin != count * itemsize:
            raise SafetensorsError(
                f"{path}: tensor '{name}' ({dtype_name} {shape}) has data_offsets [{begin}, {end}] "
                f"that do not fit its size or the {len(data)} data bytes")
        raw = data[begin:end]
        if dtype_name == "BF16":
            array = _bf16_to_float32(raw)
        else:
            array = np.frombuffer(raw, dtype=_NUMPY_DTYPES[dtype_name])
        tensors[name] = array.reshape(shape).copy()
    return tensors, metadata


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: numpy array} (float, integer or bool dtypes) in name order."""
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        array = np.asarray(tensors[name])
        dtype_name = next((n for n, d in _NUMPY_DTYPES.items()
                           if d.kind == array.dtype.kind and d.itemsize == array.dtype.itemsize), None)
        if dtype_name is None:
            raise ValueError(f"tensor '{name}': dtype {array.dtype} has no safetensors equivalent")
        raw = array.astype(_NUMPY_DTYPES[dtype_name], copy=False).tobytes()
        header[name] = {"dtype": dtype_name, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    encoded += b" " * (-len(encoded) % 8)  # keeps the data 8-byte aligned, as the reference writer does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(encoded)))
        f.write(encoded)
        for chunk in chunks:
            f.write(chunk)
