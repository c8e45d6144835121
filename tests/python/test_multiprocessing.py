"""fastt.multiprocessing: torch.multiprocessing's API (the standard
library's multiprocessing plus spawn/start_processes, ProcessContext,
the Process*Exception classes and the sharing-strategy functions).
The functions the children run are in mp_targets.py (a "spawn" child
finds it on the sys.path it inherits); they report through files in
tmp_path. Error cases are compared with torch.multiprocessing's."""
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import pytest

import fastt
import fastt.multiprocessing as mp
import mp_targets
from dist_util import PKG_PARENT, free_port


def _read(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def _alive(pid):
    """Whether pid is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_module_api():
    import multiprocessing
    assert fastt.multiprocessing is mp
    for name in multiprocessing.__all__:  # torch: from multiprocessing *
        assert hasattr(mp, name), name
        assert name in mp.__all__
    assert mp.Process is multiprocessing.Process
    assert mp.get_context("spawn").get_start_method() == "spawn"
    for name in ["spawn", "start_processes", "ProcessContext",
                 "SpawnContext", "ProcessException",
                 "ProcessRaisedException", "ProcessExitedException",
                 "get_all_sharing_strategies", "get_sharing_strategy",
                 "set_sharing_strategy"]:
        assert callable(getattr(mp, name)), name
    assert issubclass(mp.ProcessRaisedException, mp.ProcessException)
    assert issubclass(mp.ProcessExitedException, mp.ProcessException)
    assert issubclass(mp.SpawnContext, mp.ProcessContext)


def test_sharing_strategy_matches_torch():
    torch = pytest.importorskip("torch")
    tm = torch.multiprocessing
    assert mp.get_all_sharing_strategies() == \
        tm.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == tm.get_sharing_strategy()
    before = mp.get_sharing_strategy()
    try:
        for s in mp.get_all_sharing_strategies():
            mp.set_sharing_strategy(s)
            assert mp.get_sharing_strategy() == s
        with pytest.raises(AssertionError, match="invalid sharing"):
            mp.set_sharing_strategy("shared_everything")
    finally:
        mp.set_sharing_strategy(before)


def test_exceptions_pickle():
    e = mp.ProcessExitedException("process 2 terminated with signal "
                                  "SIGKILL", 2, 1234, exit_code=-9,
                                  signal_name="SIGKILL")
    e2 = pickle.loads(pickle.dumps(e))
    assert (type(e2), str(e2), e2.error_index, e2.error_pid, e2.exit_code,
            e2.signal_name) == (mp.ProcessExitedException, str(e), 2, 1234,
                                -9, "SIGKILL")
    r = pickle.loads(pickle.dumps(mp.ProcessRaisedException("m", 1, 7)))
    assert (type(r), r.msg, r.error_index, r.error_pid) == \
        (mp.ProcessRaisedException, "m", 1, 7)


def test_spawn_three_processes(tmp_path):
    assert mp.spawn(mp_targets.write_index, args=(str(tmp_path),),
                    nprocs=3) is None
    got = [_read(tmp_path / f"idx{i}") for i in range(3)]
    assert [i for i, _ in got] == [0, 1, 2]
    pids = {pid for _, pid in got}
    assert len(pids) == 3 and os.getpid() not in pids


def test_spawn_args_are_copied(tmp_path):
    t = fastt.tensor([[1, 2], [3, 4]], dtype=fastt.int32)
    mp.spawn(mp_targets.write_args,
             args=(str(tmp_path), t, {"k": [1, "two"]}), nprocs=1)
    assert _read(tmp_path / "args0") == (
        [[1, 2], [3, 4]], "fastt.int32", (2, 2), {"k": [1, "two"]})
    # The child's add_ changed its copy only (fastt does not share).
    assert t.tolist() == [[1, 2], [3, 4]]


def test_queue_carries_tensor_copies():
    ctx = mp.get_context("spawn")
    inq, outq = ctx.Queue(), ctx.Queue()
    t = fastt.arange(4, dtype=fastt.float32)
    context = mp.spawn(mp_targets.queue_roundtrip, args=(inq, outq),
                       nprocs=1, join=False)
    inq.put(t)
    i, back = outq.get(timeout=60)
    assert context.join(timeout=60)
    assert i == 0 and isinstance(back, fastt.Tensor)
    assert back.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_join_false_context_polling(tmp_path):
    context = mp.spawn(mp_targets.sleep_then_write,
                       args=(str(tmp_path), 0.5), nprocs=2, join=False)
    assert isinstance(context, mp.ProcessContext)
    assert len(context.processes) == 2
    assert context.pids() == [p.pid for p in context.processes]
    assert all(isinstance(p, int) for p in context.pids())
    polls = 0
    while not context.join(timeout=0.05):
        polls += 1
        assert polls < 2000
    assert polls > 0  # it was still running at the first poll
    assert context.join() is True  # done: stays True
    assert sorted(_read(tmp_path / f"slept{i}") for i in range(2)) == \
        [0, 1]
    assert [p.exitcode for p in context.processes] == [0, 0]


def test_raise_terminates_siblings(tmp_path):
    t0 = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(mp_targets.raise_or_sleep, args=(str(tmp_path),),
                 nprocs=3)
    assert time.monotonic() - t0 < 30  # the sleepers did not run out
    e = info.value
    msg = str(e)
    assert msg.startswith(
        "\n\n-- Process 1 terminated with the following error:\n"
        "Traceback (most recent call last):\n")
    assert "ValueError: bad value in child 1" in msg
    assert "raise_or_sleep" in msg and "mp_targets.py" in msg
    assert e.msg == msg and e.error_index == 1
    assert e.error_pid == _read(tmp_path / "pid1")
    for i in (0, 2):
        assert not _alive(_read(tmp_path / f"pid{i}")), i


def test_children_die_with_parent(tmp_path):
    """A parent killed while its children run (SIGKILL: no cleanup of
    its own) takes them along (Linux's parent-death signal)."""
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(mp_targets.__file__)!r})
        import fastt.multiprocessing as mp
        import mp_targets
        if __name__ == "__main__":
            mp.spawn(mp_targets.raise_or_sleep, args=({str(tmp_path)!r},),
                     nprocs=1)
        """))
    env = dict(os.environ, PYTHONPATH=PKG_PARENT)
    parent = subprocess.Popen([sys.executable, str(script)], env=env)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "pid0").exists():
            assert parent.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        child = _read(tmp_path / "pid0")
        assert _alive(child)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(child)


def test_exit_code(tmp_path):
    with pytest.raises(mp.ProcessExitedException) as info:
        mp.spawn(mp_targets.exit_code_3, nprocs=1)
    e = info.value
    assert str(e) == "process 0 terminated with exit code 3"
    assert (e.error_index, e.exit_code, e.signal_name) == (0, 3, None)
    assert isinstance(e.error_pid, int)


def test_signal_in_context_join(tmp_path):
    context = mp.spawn(mp_targets.sigkill_self, nprocs=1, join=False)
    pid = context.pids()[0]
    with pytest.raises(mp.ProcessExitedException) as info:
        while not context.join(timeout=0.05):
            pass
    e = info.value
    assert str(e) == "process 0 terminated with signal SIGKILL"
    assert (e.error_index, e.error_pid, e.exit_code, e.signal_name) == \
        (0, pid, -signal.SIGKILL, "SIGKILL")
    # A later join reports the same failure again.
    with pytest.raises(mp.ProcessExitedException):
        context.join()


def test_spawn_other_start_method_warns(tmp_path):
    with pytest.warns(FutureWarning, match="only supports "
                      "start_method=spawn"):
        mp.spawn(mp_targets.write_index, args=(str(tmp_path),),
                 start_method="fork")
    assert _read(tmp_path / "idx0")[0] == 0


def test_spawn_context_alias_warns():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ctx = mp.SpawnContext([], [])
    assert "renamed to ProcessContext" in str(w[0].message)
    assert ctx.join() is True and ctx.pids() == []


def test_unpicklable_fn_starts_nothing():
    with pytest.raises(Exception):
        mp.spawn(lambda i: None, nprocs=2)
    assert mp.active_children() == []


def test_distributed_all_reduce_two_ranks(tmp_path):
    port = free_port()
    mp.spawn(mp_targets.all_reduce_rank, args=(2, port, str(tmp_path)),
             nprocs=2, join=True)
    for r in range(2):
        assert _read(tmp_path / f"rank{r}") == (r, 2, [3.0, 10.0])


def _errors(module, start, tmp_path):
    """The (class name, message, error_index, exit_code, signal_name)
    each error case gives under module.start_processes."""
    out = []
    for fn in (mp_targets.raise_value_error, mp_targets.exit_code_3,
               mp_targets.sigkill_self):
        with pytest.raises((module.ProcessRaisedException,
                            module.ProcessExitedException)) as info:
            module.start_processes(fn, nprocs=1, start_method=start)
        e = info.value
        lines = str(e).splitlines()
        out.append((type(e).__name__, lines[:4] + lines[-1:],
                    e.error_index, getattr(e, "exit_code", None),
                    getattr(e, "signal_name", None)))
    return out


def test_errors_match_torch(tmp_path):
    torch = pytest.importorskip("torch")
    # fork keeps this cheap (torch is loaded here already); the messages
    # do not depend on the start method (the spawn tests above check
    # fastt's under spawn).
    ours = _errors(mp, "fork", tmp_path)
    theirs = _errors(torch.multiprocessing, "fork", tmp_path)
    assert ours == theirs
    assert ours[0][0] == "ProcessRaisedException"
    assert ours[0][1] == [
        "", "", "-- Process 0 terminated with the following error:",
        "Traceback (most recent call last):",
        "ValueError: bad value in child 0"]
    assert ours[1][1:] == (["process 0 terminated with exit code 3"] * 2,
                           0, 3, None)
    assert ours[2][1:] == (["process 0 terminated with signal SIGKILL"] * 2,
                           0, -9, "SIGKILL")
