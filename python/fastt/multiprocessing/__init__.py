"""fastt.multiprocessing: torch.multiprocessing's API.

Everything of the standard library's `multiprocessing` is here (Process,
Queue, Pool, get_context, set_start_method, ...), plus:

- spawn(fn, args=(), nprocs=1, join=True, daemon=False,
  start_method="spawn") and start_processes(...): start `nprocs`
  processes that each run ``fn(i, *args)`` (i = 0 .. nprocs-1; fn must
  be importable by the children, i.e. defined at the top level of a
  module). With join=True the call waits for all of them; when one fails
  the others are terminated and the parent raises ProcessRaisedException
  (the child raised: its traceback is in the message) or
  ProcessExitedException (the child exited with a nonzero code or was
  killed by a signal). With join=False it returns a ProcessContext to
  poll with ``.join(timeout)``. This is the usual way to start the ranks
  of a fastt.distributed job from one script.
- get_all_sharing_strategies / get_sharing_strategy /
  set_sharing_strategy: torch's names and values, kept so that scripts
  which set a strategy run unchanged. They change nothing here (below).

Tensors are copied, not shared. A fastt.Tensor that goes to another
process (in spawn's args, through a Queue, a Pipe, a Pool's arguments or
results) is pickled: the receiver gets its own tensor with the same
values, dtype and shape, in memory of its own. torch instead moves the
storage to shared memory, so that in-place changes made by one process
are seen by the others (e.g. Hogwild training on a model whose
parameters are shared). In fastt they are not: a child's in-place update
of a tensor it received does not reach the parent or its siblings; send
the result back (a Queue, a file, or fastt.distributed collectives).
Tensor.share_memory_() and is_shared() do not exist in fastt. Other
consequences of the copy: every receiver pays for a copy of the bytes;
views of one storage sent together arrive as independent tensors; the
copy does not carry requires_grad (torch keeps it on a leaf); the
sharing strategy is irrelevant (nothing is shared, so no file
descriptors or /dev/shm files are held for tensors). DataLoader workers
(fastt.utils.data) have their own shared-memory path for batches and do
not depend on this module.
"""

import ctypes
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
import weakref
from multiprocessing import *  # noqa: F401,F403

__all__ = [
    "set_sharing_strategy", "get_sharing_strategy",
    "get_all_sharing_strategies", "spawn", "start_processes",
    "ProcessContext", "SpawnContext", "ProcessException",
    "ProcessRaisedException", "ProcessExitedException",
] + list(multiprocessing.__all__)


# ---- sharing strategies (names only: fastt copies tensors) ----

if sys.platform in ("darwin", "win32"):
    _ALL_STRATEGIES = frozenset({"file_system"})
    _strategy = "file_system"
else:
    _ALL_STRATEGIES = frozenset({"file_descriptor", "file_system"})
    _strategy = "file_descriptor"


def get_all_sharing_strategies():
    """The strategy names torch accepts on this platform
    ({"file_descriptor", "file_system"} on Linux). In fastt every one of
    them means the same thing: tensors sent to another process are
    copied by pickling (see the module's docstring)."""
    return set(_ALL_STRATEGIES)


def get_sharing_strategy():
    """The strategy last set (torch's platform default at first)."""
    return _strategy


def set_sharing_strategy(new_strategy):
    """Records `new_strategy` (one of get_all_sharing_strategies(); an
    unknown name raises AssertionError as in torch). It has no effect on
    how fastt sends tensors: they are always copied."""
    global _strategy
    if new_strategy not in _ALL_STRATEGIES:
        raise AssertionError(
            f"invalid sharing strategy {new_strategy!r}, expected one of "
            f"{set(_ALL_STRATEGIES)}")
    _strategy = new_strategy


# ---- exceptions ----

class ProcessException(Exception):
    """A process started by spawn/start_processes failed. `error_index`
    is its index i (the first argument fn got), `error_pid` its pid."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """The process's fn raised an exception; the message holds the
    child's traceback."""


class ProcessExitedException(ProcessException):
    """The process exited with a nonzero code (`exit_code`) or was killed
    by a signal (`exit_code` is then minus the signal's number and
    `signal_name` its name, e.g. "SIGKILL"; None otherwise)."""

    def __init__(self, msg, error_index, error_pid, exit_code,
                 signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid,
                            self.exit_code, self.signal_name)


# ---- the child's side ----

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid):
    """Linux: have the kernel send SIGINT to this process when the parent
    goes away, so that the children of a killed parent do not live on
    (elsewhere nothing happens). parent_pid None: the process's parent
    is not the caller of start_processes (forkserver); nothing either."""
    if parent_pid is None or not sys.platform.startswith("linux"):
        return
    # A job a shell started in the background inherits SIGINT ignored,
    # which would make the parent-death signal a no-op.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGINT), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before the prctl
        os._exit(1)


def _run_child(fn, index, args, report_path, parent_pid):
    """What each started process runs. An exception from fn is written
    (its traceback, as text) to report_path and the process exits with
    code 1; the parent reads the file. SIGINT (the parent died, or ^C)
    ends the process quietly. SystemExit and os._exit pass through as
    the process's exit code."""
    _die_with_parent(parent_pid)
    try:
        fn(index, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        text = traceback.format_exc()
        partial = report_path + ".part"
        try:
            with open(partial, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(partial, report_path)
        except OSError:
            sys.stderr.write(text)
        sys.exit(1)


# ---- the parent's side ----

def _wait_all(processes, seconds):
    """Joins every process, all of them within `seconds` in total."""
    deadline = time.monotonic() + seconds
    for p in processes:
        p.join(max(0.0, deadline - time.monotonic()))


class ProcessContext:
    """The processes of one start_processes(join=False) call.
    `processes` are the multiprocessing.Process objects (index i at
    position i); `error_files` the paths where each child reports an
    exception."""

    def __init__(self, processes, error_files):
        self.processes = processes
        self.error_files = error_files
        self._pending = {p.sentinel: i for i, p in enumerate(processes)}
        self._error = None
        self._finalizer = None

    def pids(self):
        """The processes' pids, by index."""
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Waits (up to `timeout` seconds; None: until something happens)
        for processes to end. Returns True when all of them have ended
        with exit code 0, False when some are still running. When one
        has failed, ends the others and raises ProcessRaisedException /
        ProcessExitedException for it (and raises it again on later
        calls). Ending the others: wait `grace_period` seconds for them
        to exit by themselves (when given), then SIGTERM, then after
        another grace_period (30 s when None) SIGKILL."""
        if self._error is not None:
            raise self._error
        if not self._pending:
            return True
        ready = multiprocessing.connection.wait(list(self._pending),
                                                timeout=timeout)
        failed = []
        for sentinel in ready:
            index = self._pending.pop(sentinel)
            proc = self.processes[index]
            proc.join()
            if proc.exitcode != 0:
                failed.append(index)
        if not failed:
            if not self._pending:
                self._cleanup()
                return True
            return False
        index = min(failed)
        self._stop_others(grace_period)
        self._error = self._exception_for(index)
        self._cleanup()
        raise self._error

    def _stop_others(self, grace_period):
        self._pending.clear()
        if grace_period is not None:
            _wait_all(self.processes, grace_period)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        _wait_all(self.processes, 30.0 if grace_period is None
                  else grace_period)
        for p in self.processes:
            if p.is_alive():
                p.kill()
            p.join()

    def _exception_for(self, index):
        proc = self.processes[index]
        path = self.error_files[index]
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                trace = f.read()
        except OSError:
            trace = None
        if trace is not None:
            return ProcessRaisedException(
                f"\n\n-- Process {index} terminated with the following "
                f"error:\n{trace}", index, proc.pid)
        code = proc.exitcode
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"<Unknown signal {-code}>"
            return ProcessExitedException(
                f"process {index} terminated with signal {name}", index,
                proc.pid, exit_code=code, signal_name=name)
        return ProcessExitedException(
            f"process {index} terminated with exit code {code}", index,
            proc.pid, exit_code=code)

    def _cleanup(self):
        if self._finalizer is not None:
            self._finalizer()


class SpawnContext(ProcessContext):
    """The old name of ProcessContext (torch warns on use; so does this)."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since "
                      "1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False,
                    start_method="spawn"):
    """spawn() with any start method of multiprocessing ("spawn",
    "fork", "forkserver"). Returns None after all processes ended
    (join=True) or a ProcessContext (join=False)."""
    mp = multiprocessing.get_context(start_method)
    report_dir = tempfile.mkdtemp(prefix="fastt-spawn-")
    error_files = [os.path.join(report_dir, f"{i}.traceback")
                   for i in range(nprocs)]
    # A forkserver's children are the server's, not this process's.
    forkserver = mp.get_start_method() == "forkserver"
    parent_pid = None if forkserver else os.getpid()
    processes = []
    try:
        for i in range(nprocs):
            p = mp.Process(target=_run_child, daemon=daemon,
                           args=(fn, i, tuple(args), error_files[i],
                                 parent_pid))
            p.start()
            processes.append(p)
    except BaseException:
        for p in processes:
            p.terminate()
        for p in processes:
            p.join()
        shutil.rmtree(report_dir, ignore_errors=True)
        raise
    context = ProcessContext(processes, error_files)
    context._finalizer = weakref.finalize(context, shutil.rmtree,
                                          report_dir, ignore_errors=True)
    if not join:
        return context
    try:
        while not context.join():
            pass
    except (ProcessRaisedException, ProcessExitedException):
        raise
    except BaseException:  # ^C or another error in the parent's wait
        context._stop_others(grace_period=None)
        context._cleanup()
        raise
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False,
          start_method="spawn"):
    """Starts `nprocs` processes with the "spawn" start method, each
    running ``fn(i, *args)``; see the module's docstring. Another
    start_method is ignored with a FutureWarning (as in torch): use
    start_processes for fork/forkserver."""
    if start_method != "spawn":
        warnings.warn(
            f"This method only supports start_method=spawn (got: "
            f"{start_method}).\nTo use a different start_method use:\n\t\t"
            f" fastt.multiprocessing.start_processes(...)", FutureWarning,
            stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon,
                           start_method="spawn")
