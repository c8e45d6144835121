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
    assert raw_bytes(a) == raw_bytes(b)  # bit-exact, int64 beyond 2**53 too


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


# ---- special values, bit-exact ---------------------------------------------
# Every dtype's edge values as raw bit patterns, compared as bytes, never as
# values: NaN != NaN and -0.0 == 0.0 would hide a lost sign or NaN payload,
# and a float64 detour would hide int64 values above 2**53.
def _float_bits(e, m):
    """Bit patterns of a binary float with e exponent and m mantissa bits:
    ±0, 1, ±inf, quiet and signalling NaNs with payloads, the smallest and
    largest subnormals, the smallest and largest normals (each +/-)."""
    sign = 1 << (e + m)
    inf = ((1 << e) - 1) << m
    quiet = 1 << (m - 1)
    one = ((1 << (e - 1)) - 1) << m
    mask = (1 << m) - 1
    pos = [0, one, inf,
           inf | quiet, inf | quiet | 1, inf | quiet | (0x5555 & mask),
           inf | 1, inf | (quiet - 1), inf | (quiet >> 1),  # signalling
           1, mask,                                         # subnormals
           1 << m, inf - 1]                                 # normals
    return pos + [p | sign for p in pos]


INT64_SPECIAL = [-2**63, 2**63 - 1, 2**53, 2**53 + 1, -(2**53 + 1),
                 2**62 + 1, 0x0123456789ABCDEF, -0x0123456789ABCDEF, -1, 0]
# fastt dtype -> (NumPy array of the stored values, as NumPy reads them)
SPECIAL = {
    fastt.bool: np.array([False, True, True, False]),
    fastt.uint8: np.array([0, 1, 127, 128, 254, 255], np.uint8),
    fastt.int8: np.array([-128, -127, -1, 0, 1, 127], np.int8),
    fastt.int16: np.array([-2**15, -1, 0, 1, 2**15 - 1], np.int16),
    fastt.int32: np.array([-2**31, -1, 0, 2**24 + 1, 2**31 - 1], np.int32),
    fastt.int64: np.array(INT64_SPECIAL, np.int64),
    fastt.float16: np.array(_float_bits(5, 10), np.uint16).view(np.float16),
    # NumPy has no bfloat16: its raw bits as uint16.
    fastt.bfloat16: np.array(_float_bits(8, 7), np.uint16),
    fastt.float32: np.array(_float_bits(8, 23), np.uint32).view(np.float32),
    fastt.float64: np.array(_float_bits(11, 52), np.uint64).view(np.float64),
}
# The integer dtype of each dtype's width (fastt has no unsigned 16/32/64).
BITS_AS = {fastt.bool: fastt.uint8, fastt.float16: fastt.int16,
           fastt.bfloat16: fastt.int16, fastt.float32: fastt.int32,
           fastt.float64: fastt.int64}


def special_tensor(dtype):
    """SPECIAL[dtype] as a fastt tensor, built from integer bits only."""
    raw = SPECIAL[dtype]
    as_int = raw.view({1: np.uint8 if dtype in (fastt.bool, fastt.uint8)
                       else np.int8, 2: np.int16, 4: np.int32,
                       8: np.int64}[raw.itemsize])
    t = fastt.from_numpy(np.ascontiguousarray(as_int))
    return t.view(dtype) if t.dtype != dtype else t


def raw_bytes(t):
    """The bytes of t's elements, in order, read through an integer view."""
    t = t.contiguous()
    if t.dtype in BITS_AS:
        t = t.view(BITS_AS[t.dtype])
    return t.numpy().tobytes()


def assert_bits(t, dtype, expected, what):
    assert t.dtype == dtype, what
    got = raw_bytes(t)
    if got != expected:
        n = SPECIAL[dtype].itemsize
        bad = [i for i in range(len(expected) // n)
               if got[i * n:(i + 1) * n] != expected[i * n:(i + 1) * n]]
        raise AssertionError(
            f"{what}: {dtype} elements {bad} changed: "
            f"{[got[i * n:(i + 1) * n].hex() for i in bad]} vs "
            f"{[expected[i * n:(i + 1) * n].hex() for i in bad]}")


def special_dict():
    """Each dtype's special values: contiguous, as a strided view (every
    other element of a wider tensor), and one as a 0-d view with a storage
    offset, so every write path (plain copy, gather of a view) is taken."""
    out = {}
    for dt in DTYPES:
        t = special_tensor(dt)
        wide = fastt.stack([t, t.flip(0)], 1).reshape(-1)  # t[i] at 2i
        out[f"{dt}"] = t
        out[f"{dt}.strided"] = wide[::2]
        out[f"{dt}.t"] = fastt.stack([t, t], 0).t()
        out[f"{dt}.0d"] = t[3]
    return out


def special_expected(name):
    dt = getattr(fastt, name.split(".")[1])
    raw = SPECIAL[dt].tobytes()
    if name.endswith(".0d"):
        n = SPECIAL[dt].itemsize
        return dt, raw[3 * n:4 * n]
    if name.endswith(".t"):
        n = SPECIAL[dt].itemsize
        return dt, b"".join(raw[i * n:(i + 1) * n] * 2
                            for i in range(len(raw) // n))
    return dt, raw


def test_special_tensors_hold_their_bits():
    # The helpers themselves: built from integers and read back unchanged.
    for name, t in special_dict().items():
        dt, raw = special_expected(name)
        assert_bits(t, dt, raw, name)


def _via_bytesio(obj, tmp_path):
    buf = io.BytesIO()
    fastt.save(obj, buf)
    buf.seek(0)
    return fastt.load(buf)


def _via_path(obj, tmp_path, mmap=False):
    p = tmp_path / "s.safetensors"
    fastt.save(obj, p)
    return fastt.load(p, mmap=mmap)


SAVE_LOAD = {
    "save-load-bytesio": _via_bytesio,
    "save-load-path": _via_path,
    "save-load-mmap": lambda o, p: _via_path(o, p, mmap=True),
    "save_file-load_file": lambda o, p: (
        ser.save_file(o, p / "f.safetensors"),
        ser.load_file(p / "f.safetensors"))[1],
    "save_file-load_file-mmap": lambda o, p: (
        ser.save_file(o, p / "f.safetensors"),
        ser.load_file(p / "f.safetensors", mmap=True))[1],
    "save_bytes-load_bytes": lambda o, p: ser.load_bytes(ser.save_bytes(o)),
    "nested-structure": lambda o, p: _via_bytesio(
        {"n": [dict(o), tuple(o.values())]}, p)["n"][0],
}


@pytest.mark.parametrize("how", sorted(SAVE_LOAD))
def test_special_values_roundtrip_bit_exact(how, tmp_path):
    obj = special_dict()
    out = SAVE_LOAD[how](obj, tmp_path)
    assert set(out) == set(obj)
    for name in obj:
        dt, raw = special_expected(name)
        assert tuple(out[name].shape) == tuple(obj[name].shape), name
        assert_bits(out[name], dt, raw, f"{how} {name}")


def test_special_values_file_bytes_are_the_elements():
    """The writer stores each tensor's elements verbatim, little-endian, at
    its header offsets: read straight from the file, not through a loader."""
    obj = special_dict()
    data = ser.save_bytes(obj)
    header = header_of(data)
    start = 8 + struct.unpack("<Q", data[:8])[0]
    for name in obj:
        dt, raw = special_expected(name)
        b, e = header[name]["data_offsets"]
        assert data[start + b:start + e] == raw, name


def test_special_values_safetensors_numpy_reads_fastt(tmp_path):
    st_numpy = pytest.importorskip("safetensors.numpy")
    obj = {k: v for k, v in special_dict().items()
           if not k.startswith("fastt.bfloat16")}
    p = tmp_path / "np.safetensors"
    fastt.save(obj, p)
    loaded = st_numpy.load_file(str(p))
    for name in obj:
        dt, raw = special_expected(name)
        arr = loaded[name]
        assert str(arr.dtype) == NP_NAMES[dt], name
        assert arr.shape == tuple(obj[name].shape), name
        assert arr.tobytes() == raw, name


def test_special_values_fastt_reads_safetensors_numpy(tmp_path):
    st_numpy = pytest.importorskip("safetensors.numpy")
    arrays = {str(dt): SPECIAL[dt] for dt in DTYPES if dt in NP_NAMES}
    arrays["fastt.float32.0d"] = SPECIAL[fastt.float32][3:4].reshape(())
    arrays["fastt.float64.t"] = np.repeat(SPECIAL[fastt.float64],
                                          2).reshape(-1, 2)
    p = tmp_path / "np.safetensors"
    st_numpy.save_file(arrays, str(p))
    for out in (fastt.load(p), fastt.load(p, mmap=True),
                ser.load_bytes(st_numpy.save(arrays))):
        assert set(out) == set(arrays)
        for name, arr in arrays.items():
            dt, raw = special_expected(name)
            assert tuple(out[name].shape) == arr.shape, name
            assert_bits(out[name], dt, raw, f"safetensors.numpy {name}")


def _torch_bits(x):
    torch = pytest.importorskip("torch")
    x = x.contiguous()
    if x.dtype in (torch.float16, torch.bfloat16):
        x = x.view(torch.int16)
    elif x.dtype == torch.float32:
        x = x.view(torch.int32)
    elif x.dtype == torch.float64:
        x = x.view(torch.int64)
    return x.numpy().tobytes()


def test_special_values_through_safetensors_torch(tmp_path):
    """bfloat16 (which NumPy lacks) and every other dtype through
    safetensors.torch, both ways."""
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    obj = special_dict()
    p = tmp_path / "t.safetensors"
    fastt.save(obj, p)
    loaded = st_torch.load_file(str(p))
    for name in obj:
        dt, raw = special_expected(name)
        assert str(loaded[name].dtype) == "torch." + str(dt).split(".")[1]
        assert tuple(loaded[name].shape) == tuple(obj[name].shape), name
        assert _torch_bits(loaded[name]) == raw, name
    # torch-written, fastt-read: the tensors built from the same bits.
    ref = {}
    for dt in DTYPES:
        raw = SPECIAL[dt]
        tdt = getattr(torch, str(dt).split(".")[1])
        if dt == fastt.bool:
            ref[str(dt)] = torch.from_numpy(raw.copy())
        else:
            ints = torch.from_numpy(raw.view(
                {1: np.int8 if dt == fastt.int8 else np.uint8, 2: np.int16,
                 4: np.int32, 8: np.int64}[raw.itemsize]).copy())
            ref[str(dt)] = ints.view(tdt) if ints.dtype != tdt else ints
        ref[f"{dt}.0d"] = ref[str(dt)][3].clone()
    st_torch.save_file(ref, str(p))
    for out in (fastt.load(p), fastt.load(p, mmap=True),
                ser.load_bytes(st_torch.save(ref))):
        for name in ref:
            dt, raw = special_expected(name)
            assert_bits(out[name], dt, raw, f"safetensors.torch {name}")


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


def test_hypothesis_tests_are_derandomized_under_ci():
    """Under CI both fuzz tests replay a fixed example sequence (conftest's
    "ci" profile; their @settings leave derandomize/database to it)."""
    import os
    tests = [test_mutated_files_load_or_raise,
             test_random_bytes_load_or_raise]
    for f in tests:
        s = f._hypothesis_internal_use_settings
        assert s.deadline is None and s.max_examples >= 200, f.__name__
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            assert s.derandomize and s.database is None, f.__name__
