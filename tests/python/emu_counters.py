"""The CUDA emulator's runtime-call counters (tests/cuda_emu), read through
ctypes from fastt._C: runtime API calls, kernel launches and CUB calls.
Only the emulation build exports them, so on a GPU or a CPU build the tests
that need them skip. scripts/cuda_emu_test.sh sets FASTT_TEST_EMULATED=1:
there a failed lookup is an import error that fails the run, never a skip.
"""
import ctypes
import json
import os

import pytest

import fastt

EMULATED = os.environ.get("FASTT_TEST_EMULATED") == "1"
REASON = ("needs the CUDA emulation build (scripts/cuda_emu_test.sh), whose "
          "fastt._C exports fastt_emu_counters_json")


def _load():
    try:
        lib = ctypes.CDLL(fastt._C.__file__)
        lib.fastt_emu_counters_json.restype = ctypes.c_size_t
        lib.fastt_emu_counters_json.argtypes = [ctypes.c_char_p,
                                                ctypes.c_size_t]
        lib.fastt_emu_counters_reset.restype = None
    except (OSError, AttributeError) as e:
        if EMULATED:
            raise RuntimeError(
                f"FASTT_TEST_EMULATED=1 but {fastt._C.__file__} does not "
                f"export the emulator's counters: {e}") from e
        return None
    return lib


LIB = _load()
# Without a device the reason is the routine one (CI's CPU pass collects the
# CUDA files); on a real GPU it says what is missing.
requires_emu = pytest.mark.skipif(
    LIB is None, reason=REASON if fastt.cuda.is_available() else
    "no CUDA GPU (and not the CUDA emulation build)")


def reset():
    LIB.fastt_emu_counters_reset()


def read():
    """Every counter since the last reset: {"api": {...}, "kernels": {...},
    "cub": {...}, ...}."""
    buf = ctypes.create_string_buffer(1 << 16)
    n = LIB.fastt_emu_counters_json(buf, len(buf))
    if n >= len(buf):
        buf = ctypes.create_string_buffer(n + 1)
        LIB.fastt_emu_counters_json(buf, len(buf))
    return json.loads(buf.value.decode())


def calls(fn):
    """The counters of one call of fn."""
    reset()
    fn()
    return read()
