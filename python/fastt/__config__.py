"""fastt.__config__: how this build of fastt runs, named like torch's.

    print(fastt.__config__.parallel_info())   # threads, OpenMP, the BLAS
    print(fastt.__config__.show())            # build summary

The line to look for is the BLAS's threading: "OpenMP (fastt's pool)" is
the intended build; "its own pthread pool" means OpenBLAS's threads and
fastt's OpenMP threads compete for the cores (install libopenblas0-openmp
and rebuild; see the README's dependency table).
"""
import os
import sys

from . import _C

# openblas_get_parallel(): 0 sequential, 1 its own pthread pool, 2 OpenMP
_BLAS_THREADING = ("sequential", "pthread", "openmp")
_BLAS_POOL = {"sequential": "sequential", "pthread": "its own pthread pool",
              "openmp": "OpenMP (fastt's pool)"}
_OPENMP_NAMES = {201511: "4.5", 201811: "5.0", 202011: "5.1", 202111: "5.2"}


def _info():
    return _C._parallel_info()


def blas_threading():
    """'openmp', 'pthread' or 'sequential': how the linked BLAS threads."""
    p = _info()["blas_parallel"]
    return _BLAS_THREADING[p] if 0 <= p < len(_BLAS_THREADING) else "unknown"


def parallel_info():
    """Threads, OpenMP and the BLAS, like torch.__config__.parallel_info()."""
    i = _info()
    lines = ["fastt parallel:",
             f"\tfastt.get_num_threads() : {i['num_threads']}"]
    if i["openmp"]:
        v = _OPENMP_NAMES.get(i["openmp"])
        lines.append(f"OpenMP {i['openmp']}"
                     + (f" (a.k.a. OpenMP {v})" if v else ""))
    else:
        lines.append("OpenMP: not built with it (one thread)")
    lines.append(f"OpenBLAS: {i['blas_config'].strip()}")
    lines.append("\tthreads: " + _BLAS_POOL.get(blas_threading(), "unknown"))
    lines.append(f"\topenblas_get_num_threads() : {i['blas_num_threads']}")
    lines.append(f"os.cpu_count() : {os.cpu_count()}")
    lines.append("Environment variables:")
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY"):
        lines.append(f"\t{v} : {os.environ.get(v, '[not set]')}")
    return "\n".join(lines) + "\n"


def show():
    """A summary of the build, like torch.__config__.show()."""
    from . import backends
    isa = _C._cpu_isa()
    lines = ["fastt built with:",
             f"  - Python {sys.version.split()[0]}",
             f"  - OpenBLAS ({_info()['blas_config'].strip()}), threads: "
             + blas_threading(),
             "  - CPU capability usage: " + backends.cpu.get_cpu_capability()
             + (f" (vector math: SLEEF, {isa['in_use']}; the CPU runs up "
                f"to {isa['supported']})" if isa["in_use"] != "none" else
                " (vector math: scalar libm loops, built without SLEEF)"),
             f"  - CUDA: {'yes' if backends.cuda.is_built() else 'no'}"]
    return "\n".join(lines) + "\n"
