"""fastt.save / fastt.load and fastt.serialization (safetensors): round trips
of every dtype and of nested structures, interop with the safetensors
package and torch both ways, mmap loading, and malformed files (each must
raise ValueError/RuntimeError, never crash), plus a hypothesis mutation
test: a mutated valid file loads equal or raises."""

import io
import json
import struct

import numpy as np
import pytest

import fastt
from fastt import serialization as ser

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

DTYPES = [fastt.bool, fastt.uint8, fastt.int8, fastt.int16, fastt.int32,
          fastt.int64, fastt.float16, fastt.bfloat16, fastt.float32,
          fastt.float64]
NP_NAMES = {fastt.bool: "bool", fastt.uint8: "uint8", fastt.int8: "int8",
            fastt.int16: "int16", fastt.int32: "int32", fastt.int64: "int64",
            fastt.float16: "float16", fastt.float32: "float32",
            fastt.float64: "float64"}


def ramp(shape, dtype):
    n = 1
    for s in shape:
        n *= s
    t = fastt.tensor([float((i * 7) % 23 - 11) for i in range(n)],
                     dtype=fastt.float64)
    return t.reshape(shape).to(dtype)


def as_list(t):
    return t.to(fastt.float64).tolist()


def assert_same(a, b):
    assert isinstance(b, fastt.Tensor)
    assert a.dtype == b.dtype
    assert tuple(a.shape) == tuple(b.shape)
    assert as_list(a) == as_list(b)


def header_of(data):
    n = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8:8 + n])


def make_file(header, buffer=b""):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + buffer


def roundtrip(obj, **kw):
    buf = io.BytesIO()
    ser.save(obj, buf)
    buf.seek(0)
    return ser.load(buf, **kw)


# ---- round trips ----------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (5,), (45, 65)])
def test_roundtrip_dtypes_shapes(dtype, shape):
    t = ramp(shape, dtype)
    out = roundtrip({"x": t})
    assert list(out) == ["x"]
    assert_same(t, out["x"])


def test_roundtrip_noncontiguous_and_big(tmp_path):
    base = ramp((64, 48), fastt.float32)
    views = {"t": base.t(), "s": base[::3, 5:40:2], "e": base[:, 1]}
    big = fastt.arange(3 * 1024 * 1024, dtype=fastt.float32)
    views["big"] = big
    path = tmp_path / "v.safetensors"
    fastt.save(views, path)
    for mmap in (False, True):
        out = fastt.load(path, mmap=mmap)
        for k, v in views.items():
            assert_same(v, out[k])
            assert out[k].is_contiguous()
    # A view is saved as its own elements, not its whole storage.
    size = path.stat().st_size
    n = sum(v.numel() * 4 for v in views.values())
    assert n <= size < n + 4096


def test_nested_structure_roundtrip():
    a, b = ramp((2, 3), fastt.float32), ramp((4,), fastt.int64)
    obj = {"model": {"w": a, "layers": [b, (a, 1.5, None)]},
           "step": 7, "name": "run-1", "flag": True,
           "dtype": fastt.bfloat16, 3: "int key", None: [],
           "od": __import__("collections").OrderedDict(z=a, y=b)}
    out = roundtrip(obj)
    assert list(out) == list(obj)
    assert out["step"] == 7 and out["name"] == "run-1"
    assert out["flag"] is True and out["dtype"] == fastt.bfloat16
    assert out[3] == "int key" and out[None] == []
    assert isinstance(out["model"]["layers"][1], tuple)
    assert out["model"]["layers"][1][1:] == (1.5, None)
    assert_same(a, out["model"]["w"])
    assert_same(b, out["model"]["layers"][0])
    assert type(out["od"]).__name__ == "OrderedDict"
    assert list(out["od"]) == ["z", "y"]
    # Names follow the nesting.
    buf = io.BytesIO()
    ser.save(obj, buf)
    names = [k for k in header_of(buf.getvalue()) if k != "__metadata__"]
    assert "model.w" in names and "model.layers.0" in names
    assert "model.layers.1.0" in names


def test_single_tensor_and_name_collisions():
    t = ramp((3,), fastt.int16)
    assert_same(t, roundtrip(t))
    # "a.b" as one key and as a nested path: both kept.
    obj = {"a.b": t, "a": {"b": t * 2}}
    out = roundtrip(obj)
    assert_same(t, out["a.b"])
    assert_same(t * 2, out["a"]["b"])


def test_shared_storage_saved_as_copies():
    w = ramp((4,), fastt.float32)
    out = roundtrip({"enc": w, "dec": w, "view": w[1:3]})
    assert_same(w, out["enc"])
    assert_same(w[1:3], out["view"])
    out["enc"].add_(1)
    assert_same(w, out["dec"])  # copies, not aliases


def test_save_rejects_unsafe_objects():
    with pytest.raises(TypeError, match="cannot save an object"):
        roundtrip({"f": lambda: 0})
    with pytest.raises(TypeError, match="dict keys"):
        roundtrip({(1, 2): ramp((1,), fastt.float32)})
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        roundtrip(loop)


def test_paths_files_map_location_and_api(tmp_path):
    t = ramp((2, 2), fastt.float64)
    p = str(tmp_path / "a.safetensors")
    fastt.save({"t": t}, p)
    assert_same(t, fastt.load(p, map_location="cpu")["t"])
    assert_same(t, fastt.load(p, map_location=fastt.device("cpu"))["t"])
    assert_same(t, fastt.load(p, map_location={"cpu": "cpu"})["t"])
    assert_same(t, fastt.load(p, weights_only=False)["t"])
    with open(p, "rb") as fh:
        assert_same(t, fastt.load(fh)["t"])
        with pytest.raises(ValueError, match="mmap"):
            fastt.load(fh, mmap=True)
    with pytest.raises(FileNotFoundError):
        fastt.load(str(tmp_path / "missing"))
    assert fastt.save is ser.save and fastt.load is ser.load
    # safetensors.torch-like helpers.
    ser.save_file({"t": t}, p, metadata={"k": "v"})
    assert ser.read_metadata(p) == {"k": "v"}
    assert_same(t, ser.load_file(p)["t"])
    assert_same(t, ser.load_bytes(ser.save_bytes({"t": t}))["t"])
    with pytest.raises(TypeError):
        ser.save_file({"t": 1}, p)
    with pytest.raises(ValueError, match="duplicate|reserved"):
        ser.save_bytes({"__metadata__": t})


def test_mmap_views_are_private(tmp_path):
    p = tmp_path / "m.safetensors"
    t = ramp((8,), fastt.float32)
    fastt.save({"t": t, "u": t + 1}, p)
    out = fastt.load(p, mmap=True)
    out["t"].fill_(3.0)
    assert as_list(out["t"]) == [3.0] * 8
    assert_same(t, fastt.load(p)["t"])  # the file is unchanged
    del out
    assert_same(t + 1, fastt.load(p, mmap=True)["u"])


def test_state_dict_roundtrip(tmp_path):
    nn = pytest.importorskip("fastt.nn")
    fastt.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3))
    p = tmp_path / "model.safetensors"
    fastt.save(model.state_dict(), p)
    fastt.manual_seed(1)
    fresh = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3))
    x = ramp((4, 5), fastt.float32)
    with fastt.no_grad():
        assert as_list(fresh(x)) != as_list(model(x))
        fresh.load_state_dict(fastt.load(p))
        assert as_list(fresh(x)) == as_list(model(x))


# ---- interop --------------------------------------------------------------
def test_interop_safetensors_numpy(tmp_path):
    st_numpy = pytest.importorskip("safetensors.numpy")
    tensors = {str(dt): ramp((3, 4), dt) for dt in DTYPES
               if dt in NP_NAMES}
    tensors["scalar"] = ramp((), fastt.float64)
    tensors["empty"] = ramp((0, 3), fastt.int32)
    p = str(tmp_path / "np.safetensors")
    fastt.save(tensors, p)
    loaded = st_numpy.load_file(p)
    assert list(loaded) == sorted(tensors) or set(loaded) == set(tensors)
    for k, t in tensors.items():
        arr = loaded[k]
        assert str(arr.dtype) == NP_NAMES[t.dtype]
        assert arr.shape == tuple(t.shape)
        np.testing.assert_array_equal(
            arr.astype(np.float64),
            np.array(as_list(t), dtype=np.float64).reshape(arr.shape))
    # And back: numpy-written files load in fastt.
    arrays = {"a": np.arange(12, dtype=np.int16).reshape(3, 4),
              "b": np.linspace(0, 1, 5).astype(np.float16)}
    st_numpy.save_file(arrays, p)
    out = fastt.load(p)
    for k, a in arrays.items():
        assert out[k].tolist() == a.tolist()


def test_interop_torch(tmp_path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    tdt = {fastt.bool: torch.bool, fastt.uint8: torch.uint8,
           fastt.int8: torch.int8, fastt.int16: torch.int16,
           fastt.int32: torch.int32, fastt.int64: torch.int64,
           fastt.float16: torch.float16, fastt.bfloat16: torch.bfloat16,
           fastt.float32: torch.float32, fastt.float64: torch.float64}
    tensors = {str(dt): ramp((5, 3), dt) for dt in DTYPES}
    tensors["zero_d"] = ramp((), fastt.bfloat16)
    p = str(tmp_path / "t.safetensors")
    fastt.save(tensors, p)
    loaded = st_torch.load_file(p)
    for k, t in tensors.items():
        assert loaded[k].dtype == tdt[t.dtype]
        assert loaded[k].to(torch.float64).tolist() == as_list(t)
    # torch-written (safetensors.torch.save_file) files load in fastt, with
    # their metadata.
    ref = {"w": torch.randn(4, 6, dtype=torch.float32),
           "h": torch.randn(7).to(torch.bfloat16),
           "m": torch.tensor([True, False, True]),
           "s": torch.tensor(3, dtype=torch.int64),
           "e": torch.zeros(0, 2, dtype=torch.float16),
           "i8": torch.arange(-4, 4, dtype=torch.int8)}
    st_torch.save_file(ref, p, metadata={"format": "pt"})
    out = fastt.load(p)
    assert set(out) == set(ref)
    assert ser.read_metadata(p) == {"format": "pt"}
    for k, r in ref.items():
        assert out[k].dtype == {v: k2 for k2, v in tdt.items()}[r.dtype]
        assert tuple(out[k].shape) == tuple(r.shape)
        assert as_list(out[k]) == r.to(torch.float64).tolist()
    for mmap in (True,):
        out = fastt.load(p, mmap=mmap)
        assert as_list(out["w"]) == ref["w"].to(torch.float64).tolist()
    # A torch.save pickle is refused with a pointer to the right tool.
    torch.save(ref, p)
    with pytest.raises(ValueError, match="safetensors files only"):
        fastt.load(p)


# ---- malformed files ------------------------------------------------------
GOOD_HEADER = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
BUF8 = bytes(8)


def tensor_file(info, buffer=BUF8):
    return make_file({"a": info}, buffer)


MALFORMED = {
    "empty": b"",
    "short prefix": b"\x05\x00\x00",
    "huge header length": struct.pack("<Q", 200_000_000) + b"{}",
    "max header length": struct.pack("<Q", 2**64 - 1) + b"{}",
    "header past file": struct.pack("<Q", 100) + b"{}",
    "not json": make_file(b"hello"),
    "leading space": make_file(b' {}'),
    "json array": make_file(b"[]"),
    "unterminated": make_file(b'{"a":'),
    "trailing garbage in header": make_file(
        json.dumps(GOOD_HEADER).encode() + b"x", BUF8),
    "bad escape": make_file(b'{"\\q":{}}'),
    "invalid utf8": make_file(b'{"\xff":{}}'),
    "duplicate names": make_file(
        b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
        b'"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', BUF8),
    "unknown dtype": tensor_file({"dtype": "F31", "shape": [2],
                                  "data_offsets": [0, 8]}),
    "unsupported dtype": tensor_file({"dtype": "U16", "shape": [4],
                                      "data_offsets": [0, 8]}),
    "negative shape": tensor_file({"dtype": "F32", "shape": [-2],
                                   "data_offsets": [0, 8]}),
    "float shape": tensor_file({"dtype": "F32", "shape": [2.0],
                                "data_offsets": [0, 8]}),
    "overflowing shape": tensor_file({"dtype": "F32",
                                      "shape": [2**32, 2**32],
                                      "data_offsets": [0, 8]}),
    "huge dim": tensor_file({"dtype": "F32", "shape": [2**70],
                             "data_offsets": [0, 8]}),
    "too many dims": tensor_file({"dtype": "F32", "shape": [1] * 17,
                                  "data_offsets": [0, 4]}, bytes(4)),
    "offsets vs numel": tensor_file({"dtype": "F32", "shape": [2],
                                     "data_offsets": [0, 4]}),
    "reversed offsets": tensor_file({"dtype": "F32", "shape": [0],
                                     "data_offsets": [8, 0]}),
    "offsets outside": tensor_file({"dtype": "F32", "shape": [2],
                                    "data_offsets": [4, 12]}),
    "truncated buffer": tensor_file({"dtype": "F32", "shape": [2],
                                     "data_offsets": [0, 8]}, bytes(5)),
    "missing field": tensor_file({"dtype": "F32", "shape": [2]}),
    "extra field": tensor_file({"dtype": "F32", "shape": [2],
                                "data_offsets": [0, 8], "x": 1}),
    "overlap": make_file(
        {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
         "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, BUF8),
    "gap": tensor_file({"dtype": "F32", "shape": [1],
                        "data_offsets": [4, 8]}),
    "trailing data": tensor_file({"dtype": "F32", "shape": [2],
                                  "data_offsets": [0, 8]}, BUF8 + b"junk"),
    "metadata not str": make_file({"__metadata__": {"k": 1}}),
    "corrupt structure": make_file({"__metadata__": {
        "fastt.structure": "{\"t\": \"nope\"}"}}),
    "structure not json": make_file({"__metadata__": {
        "fastt.structure": "{"}}),
    "deep structure": make_file({"__metadata__": {
        "fastt.structure": "{\"l\":[" * 100000 + "]}" * 100000}}),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_files_raise(name, tmp_path):
    data = MALFORMED[name]
    with pytest.raises((ValueError, RuntimeError)):
        fastt.load(io.BytesIO(data))
    p = tmp_path / "bad.safetensors"
    p.write_bytes(data)
    for mmap in (False, True):
        with pytest.raises((ValueError, RuntimeError)):
            fastt.load(p, mmap=mmap)


def test_error_messages_name_the_problem():
    cases = {"huge header length": "byte limit",
             "header past file": "larger than the rest of the file",
             "duplicate names": "duplicate tensor name 'a'",
             "unknown dtype": "unknown dtype",
             "negative shape": "negative",
             "offsets vs numel": "needs 8",
             "overlap": "overlap",
             "gap": "unused bytes",
             "trailing data": "trailing data",
             "short prefix": "truncated"}
    for name, text in cases.items():
        with pytest.raises((ValueError, RuntimeError), match=text):
            ser.load_bytes(MALFORMED[name])


# ---- mutation fuzzing -----------------------------------------------------
def _valid_file():
    obj = {"w": ramp((3, 4), fastt.float32), "b": ramp((4,), fastt.bfloat16),
           "m": ramp((5,), fastt.bool), "n": [ramp((2,), fastt.int64), 3]}
    buf = io.BytesIO()
    ser.save(obj, buf)
    return buf.getvalue()


VALID = None


def _check_loads_or_raises(data):
    try:
        out = ser.load_bytes(data)
    except (ValueError, RuntimeError):
        return
    for t in out.values():
        t.tolist()  # every loaded tensor is readable


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mutated_files_load_or_raise(data):
    global VALID
    if VALID is None:
        VALID = _valid_file()
    blob = bytearray(VALID)
    kind = data.draw(st.sampled_from(["flip", "truncate", "length",
                                      "splice"]))
    if kind == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            i = data.draw(st.integers(0, len(blob) - 1))
            blob[i] ^= data.draw(st.integers(1, 255))
    elif kind == "truncate":
        blob = blob[:data.draw(st.integers(0, len(blob) - 1))]
    elif kind == "length":
        n = data.draw(st.one_of(st.integers(0, 2**64 - 1),
                                st.integers(0, len(blob) + 16)))
        blob[:8] = struct.pack("<Q", n)
    else:
        i = data.draw(st.integers(8, len(blob)))
        blob[i:i] = data.draw(st.binary(max_size=16))
    _check_loads_or_raises(bytes(blob))
    # The full fastt.load path (structure metadata included) as well.
    try:
        fastt.load(io.BytesIO(bytes(blob)))
    except (ValueError, RuntimeError):
        pass


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=256))
def test_random_bytes_load_or_raise(blob):
    _check_loads_or_raises(b"{" + blob if blob[:1] == b"x" else blob)
