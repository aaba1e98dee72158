"""Plain-data encoding of values that cross the sandbox boundary: a versioned JSON header plus raw array bytes.

Nothing is ever unpickled, and there is no archive format to parse: each array travels as its raw
C-order bytes, described in the header by a dtype from an allow-list, a shape and a place in the
payload. Every description is checked against the payload's length before any memory is allocated
for it, and the bytes are copied out, so a decoded array never aliases the frame. Python objects the
codec does not know (an object whose ``__eq__`` always says True, a file handle) become
``Unsupported`` records that carry only the type's name, so the trusted side never holds them.

Frame layout: ``b"SQG" + version byte + uint32 header length + uint64 payload length + header +
payload``; the header is JSON: ``{..., "values": {name: node}, "arrays": [[dtype, shape, offset], ...]}``.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

import numpy as np
import torch

from .errors import ProtocolError

CODEC_VERSION = 2
MAGIC = b"SQG" + bytes([CODEC_VERSION])
_PREFIX = struct.Struct("<4sIQ")
MAX_HEADER_BYTES = 8 * 2**20
MAX_ARRAY_BYTES = 256 * 2**20
MAX_DEPTH = 8
MAX_ITEMS = 100_000
MAX_DIMS = 32
MAX_STR = 20_000
_ALLOWED_DTYPES = {
    np.dtype(t).str: np.dtype(t)  # "<f8", "|b1", ...: byte order included, so nothing is reinterpreted
    for t in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
}
_TORCH_DTYPES = {
    str(t): t
    for t in (
        torch.bool,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.uint8,
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.complex64,
        torch.complex128,
    )
}
_TORCH_NAMES = {t: name for name, t in _TORCH_DTYPES.items()}
_JSON = json.JSONEncoder(allow_nan=False, separators=(",", ":"))  # made once: json.dumps with options makes one a call


@dataclass(frozen=True)
class Unsupported:
    """Stands for a value the codec refused to carry; only its type name crosses the boundary."""

    type_name: str
    reason: str = ""

    def __repr__(self) -> str:
        return f"<object of type {self.type_name}>"


def _type_name(value) -> str:
    try:
        return type(value).__qualname__[:80]
    except Exception:  # a hostile metaclass
        return "unknown"


class _Encoder:
    def __init__(self):
        self.arrays: list[list] = []  # [dtype, shape, offset] per array
        self.chunks: list[bytes] = []
        self.size = 0

    def _array(self, arr: np.ndarray) -> int:
        data = arr.tobytes()  # C order whatever the strides; a 0-d array stays 0-d through its shape
        self.arrays.append([arr.dtype.str, list(arr.shape), self.size])
        self.chunks.append(data)
        self.size += len(data)
        return len(self.arrays) - 1

    def encode(self, value, depth: int = 0):
        if depth > MAX_DEPTH:
            return {"t": "unsupported", "type": _type_name(value), "reason": "nested too deeply"}
        # Exact type tests: subclasses of int, str, list... are not trusted to behave like them.
        kind = type(value)
        if kind is torch.Tensor:  # the most frequent value first (a Parameter is tested below)
            return self._tensor(value)
        if value is None:
            return {"t": "none"}
        if kind is bool:
            return {"t": "bool", "v": value}
        if kind is int:
            return (
                {"t": "int", "v": str(value)}
                if value.bit_length() < 4096
                else {"t": "unsupported", "type": "int", "reason": "too large"}
            )
        if kind is float:
            return {"t": "float", "v": repr(value)}
        if kind is str or kind is np.str_:  # numpy's strings (from np.unique, arrays of words) are plain text
            value = str.__str__(value)
            return {"t": "str", "v": value[:MAX_STR], "truncated": len(value) > MAX_STR}
        if kind in (list, tuple):
            if len(value) > MAX_ITEMS:
                return {"t": "unsupported", "type": kind.__name__, "reason": "too many items"}
            return {"t": kind.__name__, "items": [self.encode(v, depth + 1) for v in value]}
        if isinstance(value, dict):  # dict, defaultdict, Counter...: the stored items, read by dict's own method
            items = list(dict.items(value))
            if len(items) > MAX_ITEMS:
                return {"t": "unsupported", "type": kind.__name__, "reason": "too many items"}
            return {"t": "dict", "items": [[self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in items]}
        if kind is np.ndarray or (isinstance(value, np.generic) and type(value).__module__ == "numpy"):
            arr = np.asarray(value)
            if arr.dtype.str not in _ALLOWED_DTYPES or arr.nbytes > MAX_ARRAY_BYTES:
                return {"t": "unsupported", "type": f"ndarray[{arr.dtype}]", "reason": "dtype or size not allowed"}
            tag = "ndarray" if kind is np.ndarray else "scalar"
            return {"t": tag, "a": self._array(arr)}
        if kind is torch.Tensor or kind is torch.nn.Parameter:
            return self._tensor(value)
        return {"t": "unsupported", "type": _type_name(value)}

    def _tensor(self, t: torch.Tensor):
        dtype = _TORCH_NAMES.get(t.dtype)
        if dtype is None or t.is_sparse or t.numel() * t.element_size() > MAX_ARRAY_BYTES:
            return {"t": "unsupported", "type": f"Tensor[{t.dtype}]", "reason": "dtype, layout or size not allowed"}
        data = t.detach() if t.requires_grad else t  # .numpy() refuses a tensor that requires grad
        if not data.is_cpu:
            data = data.to("cpu")
        if data.dtype is torch.bfloat16:  # numpy has no bfloat16: it travels as float32, exactly
            data = data.to(torch.float32)
        if data.is_conj():
            data = data.resolve_conj()
        if data.is_neg():
            data = data.resolve_neg()
        return {"t": "tensor", "a": self._array(data.numpy()), "dtype": dtype, "requires_grad": bool(t.requires_grad)}


def _decode(node, arrays: list[np.ndarray], depth: int = 0):
    if depth > MAX_DEPTH + 1 or type(node) is not dict:
        raise ProtocolError("malformed value")
    t = node.get("t")
    if t in ("tensor", "ndarray", "scalar"):  # the most frequent tags first
        index = node.get("a")
        if type(index) is not int or not 0 <= index < len(arrays):
            raise ProtocolError("value refers to a missing array")
        arr = arrays[index]
        if t == "tensor":
            dtype = _TORCH_DTYPES.get(str(node.get("dtype")))
            if dtype is None:
                raise ProtocolError("unknown tensor dtype")
            tensor = torch.from_numpy(arr)
            if tensor.dtype is not dtype:
                tensor = tensor.to(dtype)
            return tensor.requires_grad_(True) if node.get("requires_grad") and tensor.is_floating_point() else tensor
        if t == "ndarray":
            return arr
        return arr[()] if arr.ndim == 0 else arr
    if t in ("list", "tuple"):
        items = [_decode(v, arrays, depth + 1) for v in node["items"][:MAX_ITEMS]]
        return items if t == "list" else tuple(items)
    if t == "none":
        return None
    if t == "bool":
        return bool(node["v"])
    if t == "int":
        return int(str(node["v"])[:1300])
    if t == "float":
        return float(str(node["v"])[:64])
    if t == "str":
        return str(node["v"])[:MAX_STR]
    if t == "dict":
        out = {}
        for pair in node["items"][:MAX_ITEMS]:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ProtocolError("malformed dict item")
            key = _decode(pair[0], arrays, depth + 1)
            try:
                hash(key)
            except TypeError:
                return Unsupported("dict", "a key that is not hashable")
            out[key] = _decode(pair[1], arrays, depth + 1)
        return out
    if t == "unsupported":
        return Unsupported(str(node.get("type", "unknown"))[:80], str(node.get("reason", ""))[:200])
    raise ProtocolError(f"unknown value tag {str(t)[:20]!r}")


def encode_message(message: dict, values: dict | None = None) -> bytes:
    """Frame ``message`` (JSON-able) with ``values`` (name -> any value) encoded beside it."""
    enc = _Encoder()
    body = dict(message)
    body["values"] = {k: enc.encode(v) for k, v in (values or {}).items()}
    body["arrays"] = enc.arrays
    header = _JSON.encode(body).encode()
    return b"".join([_PREFIX.pack(MAGIC, len(header), enc.size), header, *enc.chunks])


def read_prefix(prefix: bytes) -> tuple[int, int]:
    """Validate a frame prefix; return the header and payload lengths."""
    magic, n_header, n_payload = _PREFIX.unpack(prefix)
    if magic != MAGIC:
        raise ProtocolError("reply does not start with the protocol's magic bytes")
    if n_header > MAX_HEADER_BYTES or n_payload > MAX_ARRAY_BYTES + 2**20:
        raise ProtocolError(f"reply too large ({n_header} + {n_payload} bytes)")
    return n_header, n_payload


PREFIX_SIZE = _PREFIX.size


def _load_arrays(specs, payload: bytes) -> list[np.ndarray]:
    """The arrays a header describes, each validated against the payload before it is copied out."""
    if not isinstance(specs, list) or len(specs) > MAX_ITEMS:
        raise ProtocolError("malformed array table")
    arrays = []
    for spec in specs:
        if not (type(spec) is list and len(spec) == 3):
            raise ProtocolError("malformed array description")
        name, shape, offset = spec
        if type(name) is not str or type(shape) is not list or type(offset) is not int:
            raise ProtocolError("malformed array description")
        dtype = _ALLOWED_DTYPES.get(name)
        if dtype is None:
            raise ProtocolError(f"array dtype {name[:20]!r} is refused")
        if len(shape) > MAX_DIMS:
            raise ProtocolError("malformed array shape")
        count = 1
        for d in shape:
            if type(d) is not int or d < 0:
                raise ProtocolError("malformed array shape")
            count *= d  # Python ints: no overflow, checked before any allocation
        nbytes = count * dtype.itemsize
        if nbytes > MAX_ARRAY_BYTES or offset < 0 or offset + nbytes > len(payload):
            raise ProtocolError("array description outside the payload")
        arrays.append(np.frombuffer(payload, dtype=dtype, count=count, offset=offset).reshape(shape).copy())
    return arrays


def decode_message(header: bytes, payload: bytes) -> tuple[dict, dict]:
    """Return ``(message, values)`` from a frame's header and payload, validating both."""
    try:
        message = json.loads(header.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ProtocolError(f"malformed reply header ({type(exc).__name__})") from None
    if not isinstance(message, dict) or not isinstance(message.get("values", {}), dict):
        raise ProtocolError("reply header is not an object")
    arrays = _load_arrays(message.pop("arrays", []), payload)
    values = {str(k): _decode(v, arrays) for k, v in message.pop("values", {}).items()}
    return message, values


def decode_frame(frame: bytes) -> tuple[dict, dict]:
    n_header, n_payload = read_prefix(frame[:PREFIX_SIZE])
    body = frame[PREFIX_SIZE:]
    if len(body) != n_header + n_payload:
        raise ProtocolError("truncated reply")
    return decode_message(body[:n_header], body[n_header:])
