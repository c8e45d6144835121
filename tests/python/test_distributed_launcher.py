"""python -m fastt.distributed.run, torchrun's launcher: each worker's
environment, -m / --run-path / --no-python, a failed or signalled worker
(its code comes back, the others are gone), signals sent to the launcher
reach the workers, a SIGKILLed launcher leaves no orphans, restarts and
usage errors. Workers are tiny scripts in tmp_path that talk through
files; no collectives and no torch."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import fastt

# The fastt the tests import (in place or installed) is the one launched.
PYTHONPATH = os.path.dirname(os.path.dirname(os.path.abspath(
    fastt.__file__)))
LAUNCHER = [sys.executable, "-m", "fastt.distributed.run"]
TIMEOUT = 20  # seconds; no launch here should take more than one

ENV_KEYS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
            "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK",
            "ROLE_WORLD_SIZE", "ROLE_NAME", "MASTER_ADDR", "MASTER_PORT",
            "OMP_NUM_THREADS", "TORCHELASTIC_RESTART_COUNT",
            "TORCHELASTIC_RUN_ID", "FASTT_LAUNCHED")

# Writes env<RANK>.json: the launcher's variables, argv, __name__.
ENV_WORKER = """
import json, os, sys
keys = %r
out = {k: os.environ.get(k) for k in keys}
out["argv"] = sys.argv[1:]
out["name"] = __name__
with open(os.path.join(%r, "env%%s.json" %% os.environ["RANK"]), "w") as f:
    json.dump(out, f)
"""

# Local rank 0 writes its pid and sleeps; local rank 1 waits for that pid,
# then exits with code argv[1], or kills itself with signal argv[1].
FAIL_WORKER = """
import os, signal, sys, time
d = %r
if os.environ["LOCAL_RANK"] == "0":
    if len(sys.argv) > 2:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(os.path.join(d, "sleeper.tmp"), "w") as f:
        f.write(str(os.getpid()))
    os.rename(os.path.join(d, "sleeper.tmp"), os.path.join(d, "sleeper"))
    time.sleep(1000)
while not os.path.exists(os.path.join(d, "sleeper")):
    time.sleep(0.01)
what = sys.argv[1]
if what.startswith("SIG"):
    os.kill(os.getpid(), getattr(signal, what))
sys.exit(int(what))
"""

# Each worker catches SIGINT, SIGTERM and SIGHUP (writes sig<RANK> with its
# name), announces itself with pid<RANK>, then sleeps.
SIGNAL_WORKER = """
import os, signal, sys, time
d, rank = %r, os.environ["RANK"]
def handler(signum, frame):
    with open(os.path.join(d, "sig" + rank), "w") as f:
        f.write(signal.Signals(signum).name)
    sys.exit(0)
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, handler)
with open(os.path.join(d, "pid.tmp" + rank), "w") as f:
    f.write(str(os.getpid()))
os.rename(os.path.join(d, "pid.tmp" + rank), os.path.join(d, "pid" + rank))
time.sleep(1000)
"""


def launcher_module():
    from fastt.distributed import run
    return run


def _env(**extra):
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (PYTHONPATH, env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def _script(tmp_path, text, name="worker.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip() % (
        (ENV_KEYS, str(tmp_path)) if text is ENV_WORKER
        else (str(tmp_path),)))
    return str(path)


def launch(tmp_path, *args, env=None, timeout=TIMEOUT):
    return subprocess.run(LAUNCHER + [str(a) for a in args],
                          cwd=str(tmp_path), env=env or _env(),
                          stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)


FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def start(tmp_path, *args, ignore=()):
    """The launcher in the background, with the signals it forwards at
    their defaults (a shell's background job would ignore SIGINT, and the
    launcher keeps an ignored signal ignored), but those in ignore."""
    def preexec():
        for s in FORWARDED:
            signal.signal(s, signal.SIG_IGN if s in ignore
                          else signal.SIG_DFL)
    return subprocess.Popen(LAUNCHER + [str(a) for a in args],
                            cwd=str(tmp_path), env=_env(),
                            stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=preexec)


def envs(tmp_path, world):
    out = []
    for r in range(world):
        with open(tmp_path / ("env%d.json" % r)) as f:
            out.append(json.load(f))
    return out


def wait_for(paths, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while not all(os.path.exists(p) for p in paths):
        assert time.monotonic() < deadline, "timed out waiting for %s" % (
            [str(p) for p in paths if not os.path.exists(p)],)
        time.sleep(0.01)


def alive(pid):
    """Whether pid runs (a zombie is dead: a container's init may never
    reap the orphans it adopts)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def gone(pid, timeout=5.0):
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.mark.parametrize("n", [2, 3])
def test_env_per_rank(tmp_path, n):
    script = _script(tmp_path, ENV_WORKER)
    r = launch(tmp_path, "--nproc-per-node", n, script, "--lr", "3", "-x")
    assert r.returncode == 0, r.stderr
    assert "OMP_NUM_THREADS" in r.stderr  # the warning
    for rank, e in enumerate(envs(tmp_path, n)):
        assert e == {
            "RANK": str(rank), "LOCAL_RANK": str(rank),
            "WORLD_SIZE": str(n), "LOCAL_WORLD_SIZE": str(n),
            "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1",
            "ROLE_RANK": str(rank), "ROLE_WORLD_SIZE": str(n),
            "ROLE_NAME": "default", "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29500", "OMP_NUM_THREADS": "1",
            "TORCHELASTIC_RESTART_COUNT": "0",
            "TORCHELASTIC_RUN_ID": "none", "FASTT_LAUNCHED": "1",
            "argv": ["--lr", "3", "-x"], "name": "__main__"}


def test_env_second_node(tmp_path):
    script = _script(tmp_path, ENV_WORKER)
    r = launch(tmp_path, "--nnodes", 2, "--node-rank", 1, "--nproc-per-node",
               2, "--master-addr", "10.1.2.3", "--master-port", 1234, script,
               env=_env(OMP_NUM_THREADS="3"))
    assert r.returncode == 0, r.stderr
    assert "OMP_NUM_THREADS" not in r.stderr  # the user's value stays
    for local, rank in enumerate((2, 3)):
        with open(tmp_path / ("env%d.json" % rank)) as f:
            e = json.load(f)
        assert (e["RANK"], e["LOCAL_RANK"], e["ROLE_RANK"]) == (
            str(rank), str(local), str(rank))
        assert (e["WORLD_SIZE"], e["LOCAL_WORLD_SIZE"], e["GROUP_RANK"],
                e["GROUP_WORLD_SIZE"], e["ROLE_WORLD_SIZE"]) == (
                    "4", "2", "1", "2", "4")
        assert (e["MASTER_ADDR"], e["MASTER_PORT"]) == ("10.1.2.3", "1234")
        assert e["OMP_NUM_THREADS"] == "3"
    assert not os.path.exists(tmp_path / "env0.json")


def test_underscore_spellings_and_single_worker(tmp_path):
    script = _script(tmp_path, ENV_WORKER)
    r = launch(tmp_path, "--nproc_per_node", 1, "--master_port", 4321,
               "--max_restarts", 0, "--node_rank", 0, script)
    assert r.returncode == 0, r.stderr
    [e] = envs(tmp_path, 1)
    assert (e["WORLD_SIZE"], e["MASTER_PORT"]) == ("1", "4321")
    assert e["OMP_NUM_THREADS"] is None  # one worker: left alone
    assert r.stderr == ""


def test_standalone_free_port(tmp_path):
    script = _script(tmp_path, ENV_WORKER)
    r = launch(tmp_path, "--standalone", "--nproc-per-node", 2,
               "--nnodes", 3, "--node-rank", 2, script)
    assert r.returncode == 0, r.stderr
    e0, e1 = envs(tmp_path, 2)
    assert e0["MASTER_PORT"] == e1["MASTER_PORT"]
    assert 0 < int(e0["MASTER_PORT"]) < 65536
    assert (e0["WORLD_SIZE"], e0["GROUP_RANK"], e0["MASTER_ADDR"]) == (
        "2", "0", "127.0.0.1")
    assert e0["TORCHELASTIC_RUN_ID"] == e1["TORCHELASTIC_RUN_ID"] != "none"


def test_nproc_cpu(tmp_path):
    # Only rank 0 writes: a big machine starts many interpreters.
    (tmp_path / "worker.py").write_text(
        "import os\n"
        "if os.environ['RANK'] == '0':\n"
        "    open('n', 'w').write(os.environ['LOCAL_WORLD_SIZE'])\n")
    r = launch(tmp_path, "--nproc-per-node", "cpu", "worker.py")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "n").read_text() == str(os.cpu_count())
    args = launcher_module().parse_args(["--nproc-per-node", "auto", "w"])
    assert args.nproc_per_node == os.cpu_count()


def test_module_mode(tmp_path):
    _script(tmp_path, ENV_WORKER, name="envmod.py")
    r = launch(tmp_path, "--nproc-per-node", 2, "-m", "envmod", "a", "--b")
    assert r.returncode == 0, r.stderr
    for e in envs(tmp_path, 2):
        assert e["argv"] == ["a", "--b"] and e["name"] == "__main__"


def test_run_path_and_no_python(tmp_path):
    script = _script(tmp_path, ENV_WORKER)
    r = launch(tmp_path, "--run-path", script, "z")
    assert r.returncode == 0, r.stderr
    [e] = envs(tmp_path, 1)
    assert e["argv"] == ["z"] and e["name"] == "__main__"
    exe = tmp_path / "worker.sh"
    exe.write_text("#!/bin/sh\necho \"$RANK $WORLD_SIZE $*\" > out$RANK\n")
    exe.chmod(0o755)
    r = launch(tmp_path, "--no-python", "--nproc-per-node", 2, "./worker.sh",
               "q")
    assert r.returncode == 0, r.stderr
    assert [(tmp_path / ("out%d" % i)).read_text() for i in (0, 1)] == [
        "0 2 q\n", "1 2 q\n"]
    r = launch(tmp_path, "--no-python", "./missing")
    assert r.returncode == 127
    assert "cannot start worker local_rank 0" in r.stderr


def test_failed_worker_code_and_no_orphan(tmp_path):
    script = _script(tmp_path, FAIL_WORKER)
    t0 = time.monotonic()
    r = launch(tmp_path, "--nproc-per-node", 2, script, 3)
    assert time.monotonic() - t0 < 10
    assert r.returncode == 3, r.stderr
    sleeper = int((tmp_path / "sleeper").read_text())
    assert gone(sleeper, timeout=0.5)
    assert "worker local_rank 1 (rank 1, pid " in r.stderr
    assert "exited with code 3" in r.stderr
    assert "stopping the 1 other worker(s)" in r.stderr


def test_failed_worker_on_second_node(tmp_path):
    script = _script(tmp_path, FAIL_WORKER)
    r = launch(tmp_path, "--nnodes", 2, "--node-rank", 1,
               "--nproc-per-node", 2, script, 7)
    assert r.returncode == 7, r.stderr
    assert "worker local_rank 1 (rank 3, pid " in r.stderr


def test_sigterm_ignored_then_sigkill(tmp_path):
    script = _script(tmp_path, FAIL_WORKER)
    t0 = time.monotonic()
    r = launch(tmp_path, "--nproc-per-node", 2, "--term-timeout", 0.5,
               script, 5, "ignore-sigterm")
    assert 0.5 <= time.monotonic() - t0 < 10
    assert r.returncode == 5, r.stderr
    assert gone(int((tmp_path / "sleeper").read_text()), timeout=0.5)
    assert "SIGKILL" in r.stderr


def test_worker_killed_by_signal(tmp_path):
    script = _script(tmp_path, FAIL_WORKER)
    r = launch(tmp_path, "--nproc-per-node", 2, script, "SIGKILL")
    assert r.returncode == 128 + signal.SIGKILL, r.stderr
    assert "worker local_rank 1 (rank 1, pid " in r.stderr
    assert "was killed by SIGKILL" in r.stderr
    assert gone(int((tmp_path / "sleeper").read_text()), timeout=0.5)


def test_all_succeed_while_one_finishes_first(tmp_path):
    (tmp_path / "worker.py").write_text(
        "import os, time\n"
        "r = os.environ['RANK']\n"
        "if r == '1':\n"
        "    time.sleep(0.3)\n"
        "open('done' + r, 'w').close()\n")
    r = launch(tmp_path, "--nproc-per-node", 2, "worker.py")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "done0").exists() and (tmp_path / "done1").exists()


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_signal_to_launcher_reaches_workers(tmp_path, sig):
    script = _script(tmp_path, SIGNAL_WORKER)
    launcher = start(tmp_path, "--nproc-per-node", 2, script)
    try:
        wait_for([tmp_path / "pid0", tmp_path / "pid1"])
        launcher.send_signal(getattr(signal, sig))
        _, err = launcher.communicate(timeout=TIMEOUT)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.communicate()
    # It dies of the same signal once the workers are done.
    assert launcher.returncode == -getattr(signal, sig), err
    assert "got %s, forwarding it to the workers" % sig in err
    for rank in (0, 1):
        assert (tmp_path / ("sig%d" % rank)).read_text() == sig
        assert gone(int((tmp_path / ("pid%d" % rank)).read_text()), 0.5)


def test_ignored_signal_stays_ignored(tmp_path):
    # nohup: a SIGHUP the launcher ignores does not stop the workers.
    script = _script(tmp_path, SIGNAL_WORKER)
    launcher = start(tmp_path, "--nproc-per-node", 2, script,
                     ignore=(signal.SIGHUP,))
    try:
        wait_for([tmp_path / "pid0", tmp_path / "pid1"])
        launcher.send_signal(signal.SIGHUP)
        time.sleep(0.3)
        assert launcher.poll() is None
        assert not list(tmp_path.glob("sig*"))
        launcher.send_signal(signal.SIGTERM)
        launcher.communicate(timeout=TIMEOUT)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.communicate()
    assert launcher.returncode == -signal.SIGTERM
    assert sorted(p.read_text() for p in tmp_path.glob("sig*")) == [
        "SIGTERM", "SIGTERM"]


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="PR_SET_PDEATHSIG is Linux's")
def test_sigkilled_launcher_leaves_no_orphans(tmp_path):
    script = _script(tmp_path, SIGNAL_WORKER)
    launcher = start(tmp_path, "--nproc-per-node", 2, script)
    try:
        wait_for([tmp_path / "pid0", tmp_path / "pid1"])
    finally:
        launcher.kill()
        launcher.communicate(timeout=TIMEOUT)
    for rank in (0, 1):
        pid = int((tmp_path / ("pid%d" % rank)).read_text())
        assert gone(pid), "worker %d outlived its launcher" % rank
        assert not (tmp_path / ("sig%d" % rank)).exists()  # SIGKILL


def test_restarts(tmp_path):
    (tmp_path / "worker.py").write_text(
        "import os, sys, time\n"
        "n = os.environ['TORCHELASTIC_RESTART_COUNT']\n"
        "open('try%s_%s' % (n, os.environ['RANK']), 'w').close()\n"
        "# every worker of a group has started before one fails\n"
        "others = ['try%s_%d' % (n, r) for r in\n"
        "          range(int(os.environ['WORLD_SIZE']))]\n"
        "t0 = time.time()\n"
        "while not all(map(os.path.exists, others)) and \\\n"
        "        time.time() - t0 < 10:\n"
        "    time.sleep(0.01)\n"
        "sys.exit(4 if n == '0' or sys.argv[1] == 'always' else 0)\n")
    r = launch(tmp_path, "--max-restarts", 2, "--nproc-per-node", 2,
               "worker.py", "once")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.glob("try*")) == [
        "try0_0", "try0_1", "try1_0", "try1_1"]
    assert "restarting the worker group (restart 1 of 2)" in r.stderr
    for p in tmp_path.glob("try*"):
        p.unlink()
    r = launch(tmp_path, "--max-restarts", 1, "worker.py", "always")
    assert r.returncode == 4, r.stderr
    assert sorted(p.name for p in tmp_path.glob("try*")) == [
        "try0_0", "try1_0"]


def test_usage_error_exits_2(tmp_path):
    r = launch(tmp_path, "--nproc-per-node", 2)  # no script
    assert r.returncode == 2
    assert r.stderr.startswith("usage:")
    assert "required: script" in r.stderr
    assert not list(tmp_path.iterdir())  # nothing ran


@pytest.mark.parametrize("args, message", [
    (["--nproc-per-node"], "expected one argument"),
    (["--nproc-per-node", "0", "w.py"], "must be at least 1"),
    (["--nproc-per-node", "gpu", "w.py"], "'cpu' or 'auto'"),
    (["--nnodes", "2", "--node-rank", "2", "w.py"], "out of range"),
    (["--nnodes", "1:4", "w.py"], "MIN:MAX"),
    (["--max-restarts", "-1", "w.py"], "must be at least 0"),
    (["--master-port", "70000", "w.py"], "is not a port"),
    (["-m", "--no-python", "w.py"], "only one of"),
    (["--nproc", "2", "w.py"], "unrecognized arguments"),  # no abbrev
])
def test_usage_errors(capsys, args, message):
    with pytest.raises(SystemExit) as e:
        launcher_module().parse_args(args)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage:") and message in err, err


def test_script_args_are_not_the_launchers():
    args = launcher_module().parse_args(
        ["--nnodes", "2", "s.py", "--nnodes", "3", "-m", "--help"])
    assert (args.nnodes, args.module) == (2, False)
    assert args.training_script == "s.py"
    assert args.training_script_args == ["--nnodes", "3", "-m", "--help"]
