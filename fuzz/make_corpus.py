"""Writes the seed corpus for fuzz_safetensors into fuzz/corpus/ (or the
directory given): small valid safetensors files over every dtype plus a few
near-misses, built here with struct/json so no binary blobs are checked in.
Usage: python3 fuzz/make_corpus.py [DIR]. Add a seed by adding to SEEDS."""

import json
import os
import struct
import sys

SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "I32": 4, "I64": 8,
         "F16": 2, "BF16": 2, "F32": 4, "F64": 8}


def safetensors(tensors, metadata=None, pad=True):
    """tensors: list of (name, dtype, shape); data bytes are a ramp."""
    header, buffer = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape in tensors:
        n = SIZES[dtype]
        for s in shape:
            n *= s
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(buffer), len(buffer) + n]}
        buffer += bytes((i * 37) % 256 for i in range(n))
    raw = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        raw += b" " * (-(8 + len(raw)) % 8)
    return struct.pack("<Q", len(raw)) + raw + buffer


SEEDS = {
    "empty_header": safetensors([]),
    "all_dtypes": safetensors([("t_" + d.lower(), d, [2, 3]) for d in SIZES]),
    "scalar_and_empty": safetensors([("s", "F64", []), ("e", "F32", [0, 4]),
                                     ("z", "I8", [3, 0])]),
    "metadata": safetensors([("w", "F32", [4])],
                            {"format": "pt", "note": "\u00e9\n\"x\""}),
    "unpadded": safetensors([("a", "U8", [3]), ("b", "I32", [2])], pad=False),
    "escapes": safetensors([("\\u00e9 \"q\" \t", "BF16", [1, 1, 2])]),
    "many_dims": safetensors([("d", "BOOL", [1] * 16)]),
    "structure": safetensors(
        [("a.0", "F32", [2]), ("a.1", "I64", [1])],
        {"fastt.structure": '{"d":[["a",{"l":[{"t":"a.0"},{"t":"a.1"}]}]]}'}),
    "gap": (lambda b: b[:-1])(safetensors([("a", "F32", [2])])),
    "overlap": (lambda h: struct.pack("<Q", len(h)) + h + bytes(8))(
        json.dumps(
            {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
             "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}},
            separators=(",", ":")).encode()),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name + ".safetensors"), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(SEEDS), out))


if __name__ == "__main__":
    main()
