"""The codec that carries values across the sandbox boundary: values round-trip exactly, and every
malformed or oversized frame is refused with ProtocolError before anything is allocated or unpickled."""

import json
import struct
import time

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.errors import ProtocolError
from grader.jail.codec import MAGIC, Unsupported, decode_frame, encode_message

DTYPES = [
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
]


def roundtrip(value):
    return decode_frame(encode_message({"op": "test"}, {"v": value}))[1]["v"]


def same_array(a, b) -> bool:
    return (
        type(a) is type(b)
        and a.dtype == b.dtype
        and a.shape == b.shape
        and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    )


@st.composite
def arrays(draw):
    arr = draw(hnp.arrays(st.sampled_from(DTYPES), hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)))
    if arr.ndim and draw(st.booleans()):
        arr = arr[..., ::2]  # a non-contiguous view
    return arr


@given(arrays())
def test_arrays_round_trip_exactly(arr):
    got = roundtrip(arr)
    assert same_array(got, arr)
    assert got.flags.owndata or got.base is not None and got.base.flags.owndata  # a copy, never a view of the frame


@given(arrays(), st.sampled_from(["float16", "bfloat16", "float32", "float64", "int64", "bool"]))
def test_tensors_round_trip_with_their_dtype(arr, dtype):
    tensor = torch.from_numpy(np.ascontiguousarray(arr.real if arr.dtype.kind == "c" else arr)).to(
        getattr(torch, dtype)
    )
    got = roundtrip(tensor)
    assert isinstance(got, torch.Tensor) and got.dtype == tensor.dtype and got.shape == tensor.shape
    assert torch.equal(got.nan_to_num(), tensor.nan_to_num()) if dtype != "bool" else torch.equal(got, tensor)


def test_lazy_views_travel_as_their_values():
    """A conjugate view and a negated view (torch's lazy conj and neg bits) arrive as the numbers they stand for;
    numpy() refuses such views, so an encoder that skipped resolving them could not send them at all."""
    z = torch.complex(torch.arange(3.0), torch.arange(3.0) + 1)
    for view in (z.conj(), z.conj().imag, torch.arange(6.0).reshape(2, 3).t()):
        got = roundtrip(view)
        assert got.dtype == view.dtype and torch.equal(got, view.resolve_conj().resolve_neg().contiguous())


def test_scalars_nesting_and_unknown_objects():
    class Anything:
        def __eq__(self, other):
            return True

    value = [
        1,
        2.5,
        "s",
        None,
        True,
        (np.float32(1.5), np.int64(3)),
        [torch.tensor(2.0, requires_grad=True)],
        Anything(),
        np.array([object()], dtype=object),
    ]
    got = roundtrip(value)
    assert got[:5] == [1, 2.5, "s", None, True]
    assert type(got[5]) is tuple and got[5][0] == np.float32(1.5) and got[5][0].dtype == np.float32
    assert got[6][0].requires_grad and got[6][0].item() == 2.0
    assert isinstance(got[7], Unsupported) and got[7].type_name.endswith("Anything")
    assert isinstance(got[8], Unsupported)


def test_dicts_round_trip_with_their_keys_and_subclasses_arrive_as_plain_dicts():
    import collections

    counts = collections.defaultdict(collections.Counter)
    counts[("the", "cows")]["eat"] += 3
    value = {("cows", "eat"): {"corn": 4 / 11, "hay": 2 / 11}, "k": [1, np.float64(2.0)], 3: None, (): counts}
    got = roundtrip(value)
    assert type(got) is dict and got[("cows", "eat")] == {"corn": 4 / 11, "hay": 2 / 11} and got[3] is None
    assert type(got[()]) is dict and got[()] == {("the", "cows"): {"eat": 3}} and type(got[()][("the", "cows")]) is dict
    bad = {"t": "dict", "items": [[{"t": "list", "items": []}, {"t": "none"}]]}  # a list as a key: not hashable
    assert isinstance(decode_frame(frame({"values": {"value": bad}, "arrays": []}))[1]["value"], Unsupported)


def frame(header: dict, payload: bytes = b"") -> bytes:
    body = json.dumps(header).encode()
    return struct.pack("<4sIQ", MAGIC, len(body), len(payload)) + body + payload


@pytest.mark.parametrize(
    "spec, why",
    [
        (["<f8", [2**40, 2**40], 0], "a huge declared shape"),
        (["<f8", [4], 0], "more bytes than the payload holds"),
        (["<f8", [1], -8], "a negative offset"),
        (["|O", [1], 0], "object dtype"),
        ([">f8", [1], 0], "big-endian (not on the allow-list)"),
        (["<f8", [-1], 0], "a negative dimension"),
        (["<f8", [1] * 40, 0], "too many dimensions"),
        (["<f8", "4", 0], "a shape that is not a list"),
    ],
)
def test_malformed_array_descriptions_are_refused_before_allocation(spec, why):
    start = time.perf_counter()
    with pytest.raises(ProtocolError):
        decode_frame(frame({"values": {"v": {"t": "ndarray", "a": 0}}, "arrays": [spec]}, bytes(16)))
    assert time.perf_counter() - start < 5, why  # refused from the header alone


@pytest.mark.parametrize(
    "data",
    [
        b"XXXX" + bytes(12),
        struct.pack("<4sIQ", MAGIC, 2**30, 0),
        struct.pack("<4sIQ", MAGIC, 0, 2**40),
        frame({"values": {"v": {"t": "ndarray", "a": 3}}, "arrays": []}),
        frame({"values": {"v": {"t": "pickle", "v": "gASVAAAAAAAAAAAu"}}}),
        frame({"values": []}),
        frame({"values": {}})[:-1] + b"",
    ],
)
def test_malformed_frames_are_refused(data):
    with pytest.raises(ProtocolError):
        decode_frame(data)
