#!/usr/bin/env python3
"""The mutation check, a test of the tests: runs a fixed, fast selection of
the Python suite against a mutant build of fastt._C (-DFASTT_MUTANTS=ON,
built by scripts/mutation.sh into build-mut/pkg), first with no mutant
(it must pass, or the check means nothing) and then once per planted bug
(csrc/mutation.h, FASTT_MUTANT=<name>), which the suite must catch.

  python3 tests/mutation/run.py --pkg build-mut/pkg [all | N | NAME...]

`all` runs every mutant; N runs a sample of N chosen from the commit hash
(so each commit checks a different subset); names run those. Default: the
FASTT_MUTANTS_SAMPLE environment variable, else all. Exit status 0 only
when the baseline passes and every mutant run is caught.

A run counts as caught when pytest fails a test (exit 1) or the process
dies of a signal (a planted bug that crashes the suite turns CI red just
the same; the table says "crash"). A hang past the timeout counts as
caught too ("timeout"). Any other pytest status (usage or collection
error, no tests) is an error of the check itself and fails it.

The tests run from a private snapshot taken at the start. For a local run
while a test elsewhere is red mid-edit, FASTT_MUTATION_PYTEST_ARGS adds
pytest arguments (e.g. "--deselect tests/python/test_x.py::test_y"); CI
sets none.
"""
import argparse
import hashlib
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HEADER = os.path.join(ROOT, "csrc", "mutation.h")

# The selection every run executes, the files that catch most per second
# first: pytest -x stops at the first failure, so a mutant caught early
# costs seconds. The targeted guards for mutants the rest missed run last,
# so "caught by" names the suite's own test wherever it has one. A file
# joins when a new mutant needs it (test_autograd_index, test_errors and
# test_nn caught none first, so they stay out). Keep the whole list under
# a minute on 2 cores: a surviving mutant runs all of it.
SELECTION = [
    "tests/python/test_tensor_api.py",
    "tests/python/test_numerics.py",
    "tests/python/test_autograd.py",
    "tests/python/test_ops.py",
    "tests/python/test_flash_attention.py",
    "tests/python/test_mutation_guards.py",
]
# The tests that check a normal build carries no live mutant fail in a
# mutant build by design, so they never run here.
DESELECT = "not mutation_inert"


def mutants():
    """(name, category, where) rows of FASTT_MUTANT_LIST in csrc/mutation.h."""
    text = open(HEADER).read().replace("\\\n", " ")
    m = re.search(r"#define FASTT_MUTANT_LIST\(X\)(.*)", text)
    if not m:
        sys.exit(f"mutation: no FASTT_MUTANT_LIST in {HEADER}")
    rows = re.findall(r"X\((\w+),\s*(\w+),\s*\"([^\"]*)\"\)", m.group(1))
    if not rows:
        sys.exit("mutation: FASTT_MUTANT_LIST is empty")
    return rows


def hook_sites():
    """name -> [file:line] of every FASTT_MUTANT(name) hook in the sources."""
    sites = {}
    bad = []
    for top in ("csrc", "kernels", "autograd"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                path = os.path.join(dirpath, f)
                if path == HEADER or not f.endswith(
                        (".cpp", ".h", ".cu", ".cuh")):
                    continue
                rel = os.path.relpath(path, ROOT)
                for i, line in enumerate(open(path, errors="replace"), 1):
                    for name in re.findall(r"FASTT_MUTANT\((\w+)\)", line):
                        sites.setdefault(name, []).append(f"{rel}:{i}")
                        if not f.endswith(".cpp"):
                            bad.append(f"{rel}:{i}")
    if bad:
        # A hook in a header changes every file that includes it, and the
        # mutant build would rebuild them all instead of taking them from
        # ccache (see scripts/mutation.sh).
        sys.exit("mutation: hooks belong in .cpp files, not headers: " +
                 ", ".join(bad))
    return sites


def pick(names, spec):
    if spec in ("", "all"):
        return list(names)
    if spec.isdigit():
        k = min(int(spec), len(names))
        try:
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT,
                                  capture_output=True, text=True,
                                  check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            head = "no-git"
        seed = int(hashlib.sha256(head.encode()).hexdigest(), 16)
        chosen = set(random.Random(seed).sample(list(names), k))
        return [n for n in names if n in chosen]  # header order
    sys.exit(f"mutation: bad sample {spec!r} (all, a count, or names)")


def first_failure(output):
    for line in output.splitlines():
        m = re.match(r"(?:FAILED|ERROR) (.+?)(?: - .*)?$", line)
        if m:
            return m.group(1)
    return ""


def snapshot():
    """A private copy of the tests (and the mutant list they read): every
    run sees the same tests even if the tree changes while the check runs
    (several people edit one tree here; CI's tree holds still anyway)."""
    dst = tempfile.mkdtemp(prefix="fastt-mutation-")
    for sub in ("tests/python", "tests/mutation"):
        shutil.copytree(os.path.join(ROOT, sub), os.path.join(dst, sub),
                        ignore=shutil.ignore_patterns("__pycache__"))
    os.makedirs(os.path.join(dst, "csrc"))
    shutil.copy(HEADER, os.path.join(dst, "csrc", "mutation.h"))
    shutil.copy(os.path.join(ROOT, "pyproject.toml"), dst)  # pytest's config
    return dst


def run_suite(tests, pkg, mutant, timeout):
    """Returns (status, detail, seconds, output)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = pkg + (os.pathsep + env["PYTHONPATH"]
                               if env.get("PYTHONPATH") else "")
    env["FASTT_MUTANT"] = mutant
    env.setdefault("OMP_NUM_THREADS", "2")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-rfE",
           "-p", "no:cacheprovider", "--tb=line", "-k", DESELECT,
           *SELECTION,
           # Extra pytest arguments (say --deselect of a test another change
           # broke mid-edit); CI sets none.
           *shlex.split(os.environ.get("FASTT_MUTATION_PYTEST_ARGS", ""))]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=tests, env=env, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"")
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
        return "timeout", f"> {timeout}s", time.monotonic() - t0, out
    dt = time.monotonic() - t0
    out = p.stdout + p.stderr
    if "names no mutant" in out:
        return "error", "the build does not know this mutant (rebuild " \
                        "build-mut)", dt, out
    if p.returncode == 0:
        return "survived", "", dt, out
    if p.returncode == 1:
        return "caught", first_failure(out) or "(a failure)", dt, out
    if p.returncode < 0:
        try:
            sig = signal.Signals(-p.returncode).name
        except ValueError:
            sig = str(-p.returncode)
        return "crash", f"{sig} (last test: {last_test(out)})", dt, out
    return "error", f"pytest exit {p.returncode}", dt, out


def last_test(output):
    ids = re.findall(r"(tests/python/\S+::\S+)", output)
    return ids[-1] if ids else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pkg", default=os.path.join(ROOT, "build-mut", "pkg"),
                    help="directory holding the mutant fastt package")
    ap.add_argument("--timeout", type=float, default=0,
                    help="seconds per mutant run (default 3x the baseline)")
    ap.add_argument("which", nargs="*",
                    help="all | N (a sample by commit hash) | mutant names")
    args = ap.parse_args()
    pkg = os.path.abspath(args.pkg)

    rows = mutants()
    names = [r[0] for r in rows]
    info = {r[0]: r for r in rows}
    sites = hook_sites()
    unhooked = [n for n in names if n not in sites]
    if unhooked:
        sys.exit("mutation: listed but never planted: " + ", ".join(unhooked))

    spec = args.which or [os.environ.get("FASTT_MUTANTS_SAMPLE", "all")]
    if len(spec) == 1 and (spec[0] in ("", "all") or spec[0].isdigit()):
        chosen = pick(names, spec[0])
    else:
        unknown = [n for n in spec if n not in info]
        if unknown:
            sys.exit("mutation: unknown mutants: " + ", ".join(unknown) +
                     "\nknown: " + ", ".join(names))
        chosen = spec

    # The package must be the mutant build, or every run would "survive".
    probe = subprocess.run(
        [sys.executable, "-c", "import fastt._C as c; print(c.__file__)"],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=pkg), capture_output=True,
        text=True)
    so = probe.stdout.strip()
    if probe.returncode != 0 or not so.startswith(pkg):
        sys.exit(f"mutation: fastt._C does not load from {pkg} "
                 f"(got {so or probe.stderr.strip()[-300:]})")
    if b"FASTT_MUTANT" not in open(so, "rb").read():
        sys.exit(f"mutation: {so} is not a mutant build "
                 "(configure it with -DFASTT_MUTANTS=ON)")

    print(f"mutation check: {len(chosen)} of {len(names)} mutants, "
          f"selection of {len(SELECTION)} test files/ids, package {pkg}")
    tests = snapshot()
    try:
        return check(tests, pkg, chosen, info, args.timeout)
    finally:
        shutil.rmtree(tests, ignore_errors=True)


def check(tests, pkg, chosen, info, timeout):
    status, detail, base_t, out = run_suite(tests, pkg, "", None)
    if status != "survived":  # "survived" == the suite passed
        print(out[-6000:])
        print(f"BASELINE FAILED ({status} {detail}): the selection must pass "
              "on the mutant build with no mutant active, or the check "
              "means nothing.")
        return 1
    print(f"baseline (no mutant): passed in {base_t:.1f}s")
    timeout = timeout or max(120.0, 3 * base_t)

    results = []
    for name in chosen:
        status, detail, dt, out = run_suite(tests, pkg, name, timeout)
        results.append((name, status, detail, dt))
        print(f"  {name:22s} {status:8s} {dt:6.1f}s  {detail}", flush=True)
        if status == "error":
            print(out[-3000:])

    caught = [r for r in results if r[1] in ("caught", "crash", "timeout")]
    print()
    print("| mutant | category | where | result | caught by | time |")
    print("|---|---|---|---|---|---|")
    for name, status, detail, dt in results:
        _, cat, where = info[name]
        print(f"| {name} | {cat} | {where} | {status} | "
              f"{detail.replace('|', '/')} | {dt:.1f}s |")
    rate = 100.0 * len(caught) / len(results) if results else 100.0
    print(f"\ncatch rate: {len(caught)}/{len(results)} ({rate:.0f}%); "
          f"baseline {base_t:.1f}s")
    bad = [r for r in results if r not in caught]
    if bad:
        print("UNCAUGHT or errored: " + ", ".join(
            f"{n} ({s})" for n, s, _, _ in bad) +
            "\nA surviving mutant is a coverage hole: add a test that "
            "catches it (tests/python/test_mutation_guards.py), do not drop "
            "the mutant.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
