"""Instructions per op under valgrind's callgrind, for the headline ops on
16-element float32 CPU tensors (4x4 for matmul and view).

Each op runs in two separate callgrind processes that differ only in the
number of timed iterations, N1 and N2 (same imports, same setup, same
warm-up); the per-op count is (Ir(N2) - Ir(N1)) / (N2 - N1), which cancels
interpreter start-up, import and setup. The loop is timeit's
(`for _ in itertools.repeat(None, n): stmt`, gc disabled), so each count
includes the loop's own bytecode and freeing the result; the "loop" row is
the empty statement and "net" subtracts it. "in fastt code" is the part
spent in fastt's own machine code (the _C module; for --cpp the program,
which holds libfastt.a), from callgrind_annotate's per-object split:
exact, as start-up noise (a few thousand instructions between identical
runs, under 1 Ir/op overall) lies elsewhere. It excludes libc (malloc),
libpython and OpenBLAS.

Optionally (--cpp, needs the build directory of the same tree) the C++
fastt::add on two 16-element float32 tensors, from a small program linked
against the build's libfastt.a with the link line of examples/cpp's demo.

    python3 bench/callgrind_ops.py [--pythonpath DIR] [--json OUT]
        [--n1 2000] [--n2 12000] [--only add,sum] [--cpp [--build-dir D]]

The environment is fixed so that the counts repeat: PYTHONHASHSEED=0, one
OpenMP/OpenBLAS thread, an empty working directory and -P (a sys.path
directory whose listing changes between runs changed start-up by ~0.5M
instructions, i.e. ~50 per op at the default N2 - N1). Under
valgrind OpenBLAS sees valgrind's CPUID, so its GEMM kernel may not be the
one chosen natively.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# (key, label, statement); setup names: a, b (16 elements), m1, m2 (4x4),
# zeros (fastt.zeros).
OPS = [
    ("loop", "empty loop (baseline)", "pass"),
    ("add", "a + b", "a + b"),
    ("mul_scalar", "a * 2.0", "a * 2.0"),
    ("relu", "a.relu()", "a.relu()"),
    ("sum", "a.sum()", "a.sum()"),
    ("slice", "a[1:]", "a[1:]"),
    ("view", "a.view(4, 4)", "a.view(4, 4)"),
    ("matmul", "m1 @ m2 (4x4)", "m1 @ m2"),
    ("zeros", "fastt.zeros(16)", "zeros(16)"),
    # bound by binder rows (python/src/binder.h)
    ("transpose", "m1.transpose(0, 1)", "m1.transpose(0, 1)"),
    ("clamp_min", "a.clamp_min(0.0)", "a.clamp_min(0.0)"),
]

CHILD = r"""
import gc, itertools, sys
import fastt
fastt.set_num_threads(1)
a = fastt.tensor([float(i) for i in range(16)])
b = fastt.tensor([float(16 - i) for i in range(16)])
m1 = fastt.tensor([[float(4 * i + j) for j in range(4)] for i in range(4)])
m2 = fastt.tensor([[float(j - i) for j in range(4)] for i in range(4)])
zeros = fastt.zeros
assert a.dtype == fastt.float32 and a.device.type == "cpu", (a.dtype, a.device)
n = int(sys.argv[1])
warm = int(sys.argv[2])
stmt = sys.argv[3]
src = "def run(n, a, b, m1, m2, zeros):\n" \
      "    for _ in itertools.repeat(None, n):\n" \
      "        " + stmt + "\n"
env = {"itertools": itertools}
exec(compile(src, "<callgrind_ops>", "exec"), env)
run = env["run"]
gc.collect()
gc.disable()
run(warm, a, b, m1, m2, zeros)
run(n, a, b, m1, m2, zeros)
"""

CPP = r"""
#include <cstdlib>
#include "csrc/ops.h"
#include "csrc/parallel.h"
using namespace fastt;
int main(int argc, char** argv) {
  long n = std::atol(argv[1]), warm = std::atol(argv[2]);
  set_num_threads(1);
  Tensor a = Tensor::empty({16}, DType::Float32);
  Tensor b = Tensor::empty({16}, DType::Float32);
  a.fill_(1.0);
  b.fill_(2.0);
  for (long i = 0; i < warm + n; ++i) {
    Tensor c = add(a, b);
    void* p = c.data_ptr();
    asm volatile("" : : "r"(p) : "memory");
  }
  return 0;
}
"""


def env_for(pythonpath):
    env = dict(os.environ)
    env["PYTHONPATH"] = pythonpath
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = "1"
    env.pop("PYTHONSTARTUP", None)
    return env


def total_ir(path):
    """The Ir total of a callgrind output file ("totals:" or "summary:")."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"^totals:\s+(\d+)", text, re.M) or \
        re.search(r"^summary:\s+(\d+)", text, re.M)
    if not m:
        raise RuntimeError(f"no totals/summary line in {path}")
    return int(m.group(1))


def ir_by_object(path):
    """{shared object basename: exclusive Ir} from callgrind_annotate."""
    p = subprocess.run(["callgrind_annotate", "--threshold=100", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    objs = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)$", line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        o = re.search(r"\[([^\]]*)\]\s*$", m.group(2))
        name = os.path.basename(o.group(1)) if o else "?"
        objs[name] = objs.get(name, 0) + int(m.group(1).replace(",", ""))
    return objs


def callgrind(argv, env, outdir, tag):
    out = os.path.join(outdir, f"callgrind.{tag}.out")
    cmd = ["valgrind", "--tool=callgrind", "-q", f"--callgrind-out-file={out}",
           "--dump-line=no"] + argv
    # An empty working directory: a directory that changes between runs
    # (outdir itself) on sys.path changes the import system's work.
    cwd = os.path.join(outdir, "cwd")
    os.makedirs(cwd, exist_ok=True)
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} exited {p.returncode}:\n"
                           f"{p.stdout}\n{p.stderr}")
    return total_ir(out), out


def per_op(argv_for, env, outdir, tag, n1, n2, warm):
    """Ir per op overall and per shared object. The per-object counts of
    fastt's own code are exact (start-up noise sits in other objects)."""
    t = time.time()
    ir1, f1 = callgrind(argv_for(n1, warm), env, outdir, f"{tag}.{n1}")
    ir2, f2 = callgrind(argv_for(n2, warm), env, outdir, f"{tag}.{n2}")
    o1, o2 = ir_by_object(f1), ir_by_object(f2)
    objs = {k: (o2.get(k, 0) - o1.get(k, 0)) / (n2 - n1)
            for k in set(o1) | set(o2)}
    objs = dict(sorted(((k, round(v, 2)) for k, v in objs.items()
                        if abs(v) >= 0.05), key=lambda kv: -abs(kv[1])))
    return {"ir_n1": ir1, "ir_n2": ir2, "n1": n1, "n2": n2,
            "per_op": (ir2 - ir1) / (n2 - n1), "by_object": objs,
            "seconds": round(time.time() - t, 1)}


def in_fastt(r):
    """Ir/op in fastt's own code: the _C module (or the C++ program)."""
    return sum(v for k, v in r["by_object"].items()
               if k.startswith("_C.") or k == "cg_add")


def build_cpp(build_dir, src_dir, outdir):
    """Compile CPP against build_dir/libfastt.a with the demo's link line."""
    ninja = os.path.join(build_dir, "build.ninja")
    lib = os.path.join(build_dir, "libfastt.a")
    if not (os.path.exists(ninja) and os.path.exists(lib)):
        raise RuntimeError(f"no build.ninja / libfastt.a in {build_dir}")
    text = open(ninja).read()
    m = re.search(r"^build examples/cpp/fastt_demo:.*?\n((?:  .*\n)+)",
                  text, re.M)
    if not m:
        raise RuntimeError("fastt_demo's link rule not found in build.ninja")
    lm = re.search(r"^  LINK_LIBRARIES = (.*)$", m.group(1), re.M)
    libs = shlex.split(lm.group(1)) if lm else []
    libs = [os.path.join(build_dir, x) if x == "libfastt.a" else x
            for x in libs]
    cpp = os.path.join(outdir, "cg_add.cpp")
    exe = os.path.join(outdir, "cg_add")
    with open(cpp, "w") as f:
        f.write(CPP)
    cxx = os.environ.get("CXX", "c++")
    cmd = [cxx, "-O3", "-DNDEBUG", "-std=gnu++17", "-fopenmp",
           "-DFMT_SHARED", f"-I{src_dir}",
           f"-I{os.path.join(build_dir, 'include')}", cpp, "-o", exe] + libs
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed:\n{p.stdout}")
    return exe


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pythonpath", default=os.path.join(REPO, "python"),
                    help="the directory holding the fastt package "
                         "(default: this repo's python/)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--n1", type=int, default=2000)
    ap.add_argument("--n2", type=int, default=12000)
    ap.add_argument("--warm", type=int, default=200,
                    help="untimed iterations before the timed ones")
    ap.add_argument("--only", help="comma-separated op keys (loop is "
                    "always run): " + ",".join(k for k, _, _ in OPS))
    ap.add_argument("--cpp", action="store_true",
                    help="also the C++ fastt::add (needs --build-dir)")
    ap.add_argument("--build-dir", help="the CMake build directory of the "
                    "tree (default: PYTHONPATH/../build)")
    ap.add_argument("--keep", help="keep callgrind output files here")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind not found")
    pythonpath = os.path.abspath(args.pythonpath)
    env = env_for(pythonpath)
    py = os.path.realpath(sys.executable)  # not a pyenv shim: valgrind
    # would measure the shell and not follow the exec'd interpreter
    probe = subprocess.run(
        [py, "-c", "import fastt, os; print(os.path.dirname(fastt.__file__))"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if probe.returncode != 0:
        sys.exit(f"cannot import fastt from {pythonpath}:\n{probe.stderr}")
    pkg = probe.stdout.strip()
    # -P (3.11+): no script or working directory on sys.path.
    py_argv = [py] + (["-P"] if sys.version_info >= (3, 11) else []) + ["-c"]
    ops = OPS
    if args.only:
        keep = set(args.only.split(",")) | {"loop"}
        unknown = keep - {k for k, _, _ in OPS}
        if unknown:
            sys.exit(f"unknown ops: {sorted(unknown)}")
        ops = [o for o in OPS if o[0] in keep]
    outdir = args.keep or tempfile.mkdtemp(prefix="callgrind_ops.")
    os.makedirs(outdir, exist_ok=True)
    print(f"fastt from {pkg}; python {py}; N1={args.n1} N2={args.n2} "
          f"warm={args.warm}", file=sys.stderr)
    rows = {}
    for key, label, stmt in ops:
        r = per_op(lambda n, w: py_argv + [CHILD, str(n), str(w), stmt],
                   env, outdir, key, args.n1, args.n2, args.warm)
        r["label"] = label
        rows[key] = r
        print(f"  {label:24s} {r['per_op']:10.1f} Ir/op  ({r['seconds']}s)",
              file=sys.stderr)
    loop = rows["loop"]["per_op"]
    for key, r in rows.items():
        r["net"] = r["per_op"] - loop
    if args.cpp:
        build_dir = os.path.abspath(args.build_dir or os.path.join(
            pythonpath, os.pardir, "build"))
        src_dir = os.path.dirname(build_dir)
        cmake_cache = os.path.join(build_dir, "CMakeCache.txt")
        if os.path.exists(cmake_cache):
            m = re.search(r"^fastt_SOURCE_DIR:STATIC=(.*)$",
                          open(cmake_cache).read(), re.M)
            if m:
                src_dir = m.group(1)
        try:
            exe = build_cpp(build_dir, src_dir, outdir)
            r = per_op(lambda n, w: [exe, str(n), str(w)], env, outdir,
                       "cpp_add", args.n1, args.n2, args.warm)
            r["label"] = "C++ fastt::add(a, b)"
            r["net"] = r["per_op"]
            rows["cpp_add"] = r
            print(f"  {r['label']:24s} {r['per_op']:10.1f} Ir/op",
                  file=sys.stderr)
        except RuntimeError as e:
            print(f"C++ fastt::add skipped: {e}", file=sys.stderr)
    print(f"{'op':26s} {'Ir/op':>10s} {'net of loop':>12s} "
          f"{'in fastt code':>14s}")
    for key, r in rows.items():
        net = "" if key in ("loop", "cpp_add") else f"{r['net']:12.1f}"
        r["in_fastt"] = in_fastt(r)
        print(f"{r['label']:26s} {r['per_op']:10.1f} {net:>12s} "
              f"{r['in_fastt']:14.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pythonpath": pythonpath, "package": pkg,
                       "python": py, "n1": args.n1, "n2": args.n2,
                       "warm": args.warm, "rows": rows}, f, indent=1)
    if not args.keep:
        shutil.rmtree(outdir, ignore_errors=True)


if __name__ == "__main__":
    main()
