#!/usr/bin/env python3
"""Run torch's whole OpInfo database against fastt and write the report.

    PYTHONPATH=python python3 scripts/opinfo_report.py [-j N] [--update]
        [--names a,b,c [--merge]] [--report PATH] [--json PATH]
        [--rerun-failed] [--complex]

Every op name runs in a worker process (a crash or a hang is that name's
result, not the end of the run). Writes tests/python/opinfo_report.md:
the counts per namespace and per status, then one row per op name with its
sample counts and its first difference. --update adds the names that now
pass in full to tests/python/opinfo_pass.txt (never removes one: that list
is what CI holds fastt to, tests/python/test_opinfo.py). --rerun-failed
runs again only the names the existing report lists as crash or hang (a
loaded machine's timeouts) and rewrites it with their new results;
--names with --merge does the same for the names given (a change that
touched a few ops refreshes their rows without the full run).
--complex runs the complex samples instead (complex64, complex128; the
harness's complex run) with their own report and pass list,
opinfo_complex_report.md and opinfo_complex_pass.txt.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests", "python")
PASS_LIST = os.path.join(TESTS, "opinfo_pass.txt")
REPORT = os.path.join(TESTS, "opinfo_report.md")
COMPLEX_PASS_LIST = os.path.join(TESTS, "opinfo_complex_pass.txt")
COMPLEX_REPORT = os.path.join(TESTS, "opinfo_complex_report.md")
COMPLEX = os.environ.get("FASTT_OPINFO_COMPLEX_RUN") == "1"
TIMEOUT_S = 120  # per op name


def worker(names):
    sys.path.insert(0, TESTS)
    import opinfo_harness as H
    for n in names:
        t = time.time()
        r = H.run_name(n, complex=COMPLEX)
        d = {"name": n, "status": r.status, "first": r.first,
             "fwd": vars(r.fwd), "bwd": vars(r.bwd), "err": vars(r.err),
             "seconds": round(time.time() - t, 2)}
        print("RESULT " + json.dumps(d), flush=True)


def run_one_batch(names, env):
    """Run names in one worker; returns {name: result}; a name the worker
    died or hung on is recorded as crash/hang and the rest go on."""
    results = {}
    todo = list(names)
    while todo:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker",
               ",".join(todo)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, env=env)
        start = time.time()
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        buf = ""
        hung = False
        while True:
            if not sel.select(timeout=5):
                if time.time() - start > TIMEOUT_S:
                    p.kill()
                    hung = True
                    break
                continue
            line = p.stdout.readline()
            if not line:
                break
            if line.startswith("RESULT "):
                d = json.loads(line[7:])
                results[d["name"]] = d
                start = time.time()
        p.wait()
        todo = [n for n in todo if n not in results]
        if todo:
            bad = todo.pop(0)
            results[bad] = {"name": bad, "status": "hang" if hung else
                            "crash", "first": (
                                f"no result in {TIMEOUT_S} s" if hung else
                                f"worker died (exit {p.returncode})"),
                            "fwd": {}, "bwd": {}, "err": {}, "seconds": 0}
    return results


def namespace(name):
    sys.path.insert(0, TESTS)
    import opinfo_harness as H
    return H.namespace(name)


def write_report(results, path, method_names):
    by_ns = collections.defaultdict(collections.Counter)
    for n, d in results.items():
        by_ns[namespace(n)][d["status"]] += 1
        if n in method_names:
            by_ns["Tensor methods"][d["status"]] += 1
    statuses = ["pass", "wrong", "error", "missing", "crash", "hang", "n/a"]
    inputs = "complex" if COMPLEX else "real"
    lines = ["# OpInfo conformance: torch's op_db against fastt" +
             (", complex samples" if COMPLEX else ""), "",
             "Written by `scripts/opinfo_report.py" +
             (" --complex" if COMPLEX else "") + "` (the full run; CI runs "
             "the pass list, `tests/python/test_opinfo.py`). Statuses: "
             f"**pass** every sample with {inputs} inputs matches torch "
             "(complex outputs included) forward, backward" +
             ("" if COMPLEX else " and on error inputs") + "; **wrong** a "
             "value, dtype, shape, gradient or error class differs; "
             "**error** fastt raised on a valid sample; **missing** fastt "
             "has no such function or method; **n/a** torch gives no CPU "
             f"sample with {inputs} inputs.", "",
             "| namespace | " + " | ".join(statuses) + " | total |",
             "|---|" + "---|" * (len(statuses) + 1)]
    total = collections.Counter()
    for ns in sorted(by_ns):
        c = by_ns[ns]
        if ns != "Tensor methods":
            total.update(c)
        lines.append(f"| {ns} | " + " | ".join(str(c[s]) for s in statuses)
                     + f" | {sum(c.values())} |")
    lines.append("| **all names** | " + " | ".join(
        str(total[s]) for s in statuses) + f" | {sum(total.values())} |")
    applicable = sum(total.values()) - total["n/a"]
    lines += ["", f"Passing: {total['pass']} of {sum(total.values())} op "
              f"names ({100.0 * total['pass'] / max(1, sum(total.values())):.1f}%"
              f"; {100.0 * total['pass'] / max(1, applicable):.1f}% of the "
              f"{applicable} with a CPU sample of {inputs} inputs).", "",
              "| op | status | forward pass/wrong/error | backward "
              "pass/wrong/error | error inputs pass/wrong | first "
              "difference |", "|---|---|---|---|---|---|"]

    def trip(c, keys=("passed", "wrong", "erroring")):
        return "/".join(str(c.get(k, 0)) for k in keys)
    for n in sorted(results):
        d = results[n]
        first = d["first"].replace("|", "\\|").replace("\n", " ")[:220]
        lines.append(f"| `{n}` | {d['status']} | {trip(d['fwd'])} | "
                     f"{trip(d['bwd'])} | "
                     f"{trip(d['err'], ('passed', 'wrong'))} | {first} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return total


def read_report(path):
    """The per-name rows of a report write_report wrote, as results."""
    results = {}
    with open(path) as f:
        for ln in f:
            if not ln.startswith("| `"):
                continue
            cells = [c.strip() for c in ln.strip().strip("|").split(" | ")]
            name, status, fwd, bwd, err = cells[:5]
            first = cells[5] if len(cells) > 5 else ""

            def counts(s, keys=("passed", "wrong", "erroring")):
                return dict(zip(keys, map(int, s.split("/"))))
            results[name.strip("`")] = {
                "status": status, "first": first.replace("\\|", "|"),
                "fwd": counts(fwd), "bwd": counts(bwd),
                "err": counts(err, ("passed", "wrong"))}
    return results


def read_pass_list():
    if not os.path.exists(PASS_LIST):
        return []
    with open(PASS_LIST) as f:
        return [ln.strip() for ln in f
                if ln.strip() and not ln.startswith("#")]


def write_pass_list(names):
    header = ("# OpInfo op names fastt passes in full (forward, backward, "
              + ("complex64/complex128 samples" if COMPLEX else
                 "error inputs; samples of real inputs") +
              ").\n# CI fails when one stops passing "
              "(tests/python/test_opinfo.py). Grow it with\n"
              "#   PYTHONPATH=python python3 scripts/opinfo_report.py "
              "--update" + (" --complex" if COMPLEX else "") +
              "\n# and never remove a name to make CI green.\n")
    with open(PASS_LIST, "w") as f:
        f.write(header + "".join(n + "\n" for n in sorted(set(names))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--names")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--report", default=REPORT)
    ap.add_argument("--json")
    ap.add_argument("--rerun-failed", action="store_true")
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("--complex", action="store_true")
    a = ap.parse_args()
    if a.worker:
        worker(a.worker.split(","))
        return
    global COMPLEX, PASS_LIST
    if a.complex:
        COMPLEX, PASS_LIST = True, COMPLEX_PASS_LIST
        if a.report == REPORT:
            a.report = COMPLEX_REPORT
    sys.path.insert(0, TESTS)
    env = dict(os.environ, OMP_NUM_THREADS="1", FASTT_NUM_THREADS="1",
               FASTT_OPINFO_COMPLEX_RUN="1" if COMPLEX else "0")
    import opinfo_harness as H
    names = a.names.split(",") if a.names else H.all_names()
    earlier = {}
    if a.merge and not a.names:
        ap.error("--merge needs --names")
    unknown = sorted(set(names) - set(H.all_names())) if a.merge else []
    if unknown:  # (a row for them would change the report's totals)
        ap.error("--merge: not OpInfo op names: " + ", ".join(unknown))
    if a.rerun_failed or a.merge:
        earlier = read_report(a.report)
    if a.rerun_failed:
        names = [n for n, d in earlier.items()
                 if d["status"] in ("crash", "hang")]
    method_names = {o.name for o in H.op_db if o.method_variant is not None}
    batches = [names[i::a.j] for i in range(a.j)]
    from concurrent.futures import ThreadPoolExecutor
    t = time.time()
    results = {}
    with ThreadPoolExecutor(a.j) as ex:
        for r in ex.map(lambda b: run_one_batch(b, env), batches):
            results.update(r)
    print(f"{len(results)} names in {time.time() - t:.0f} s", file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if a.rerun_failed or a.merge:
        earlier.update(results)
        total = write_report(earlier, a.report, method_names)
        print(dict(total))
    elif a.names:
        for n in names:
            d = results[n]
            print(f"{d['status']:8s} {n:40s} {d['first'][:160]}")
    else:
        total = write_report(results, a.report, method_names)
        print(dict(total))
    if a.update:
        passing = [n for n, d in results.items() if d["status"] == "pass"]
        old = read_pass_list()
        write_pass_list(set(old) | set(passing))
        print(f"pass list: {len(old)} -> {len(set(old) | set(passing))}")
        lost = [n for n in old if n in results and
                results[n]["status"] != "pass"]
        if lost:
            print("no longer passing (kept on the list): " + ", ".join(lost))


if __name__ == "__main__":
    main()
