"""The extension's thread-local storage stays small.

fastt._C uses initial-exec TLS for its hot per-thread state (grad mode,
allocator cache, CUDA stream), which marks the module STATIC_TLS: glibc
must place its WHOLE TLS block in the static TLS surplus that every
dlopen'ed extension of the process shares (a few hundred bytes by
default). Beside torch's own libraries a large block fails the import
with "cannot allocate memory in static TLS block", so big per-thread
objects live on the heap behind a thread_local pointer."""
import struct

import fastt

PT_TLS = 7
BUDGET = 288  # bytes; measured 200 (CPU build) and 264 (CUDA build)


def tls_memsz(path):
    with open(path, "rb") as f:
        ident = f.read(16)
        assert ident[:4] == b"\x7fELF" and ident[4] == 2, "64-bit ELF only"
        end = "<" if ident[5] == 1 else ">"
        f.seek(0x20)
        (phoff,) = struct.unpack(end + "Q", f.read(8))
        f.seek(0x36)
        phentsize, phnum = struct.unpack(end + "HH", f.read(4))
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, _flags, _off, _va, _pa, _filesz, memsz = struct.unpack(
                end + "IIQQQQQ", f.read(48))
            if p_type == PT_TLS:
                return memsz
    return 0


def test_static_tls_block_is_small():
    size = tls_memsz(fastt._C.__file__)
    assert size <= BUDGET, (
        f"fastt._C's TLS block is {size} bytes (budget {BUDGET}): move big "
        "thread_local objects behind a thread_local pointer")
