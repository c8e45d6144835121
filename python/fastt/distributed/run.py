"""torchrun for fastt: python -m fastt.distributed.run [--nproc-per-node N
...] script.py args starts this node's workers with torchrun's options and
env, forwards signals to them and stops them all when one fails. It exits
with the failed worker's code (128+S if signal S killed it), not torchrun's 1.
"""

import argparse
import os
import select
import signal
import socket
import subprocess
import sys
import time
import uuid

_PROG = "fastt.distributed.run"
# What the launcher forwards to its workers (torchrun's set, less SIGQUIT).
_FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP")
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
# --run-path: the worker runs the script with runpy.run_path, as torchrun's
# function entrypoint does (sys.path[0] is the working directory, not the
# script's directory).
_RUN_PATH = ("import runpy, sys; del sys.argv[0]; "
             "runpy.run_path(sys.argv[0], run_name='__main__')")


def _nproc(value):
    if value in ("cpu", "auto"):  # no GPU here: "auto" is the CPU count
        return os.cpu_count() or 1
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            "expected an integer, 'cpu' or 'auto', got %r" % value) from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1, got %d" % n)
    return n


def _nnodes(value):
    low, sep, high = value.partition(":")
    try:
        low = int(low)
        high = int(high) if sep else low
    except ValueError:
        raise argparse.ArgumentTypeError(
            "expected an integer, got %r" % value) from None
    if low != high:
        raise argparse.ArgumentTypeError(
            "elastic MIN:MAX ranges are not supported, give one number")
    if low < 1:
        raise argparse.ArgumentTypeError("must be at least 1, got %d" % low)
    return low


def _at_least(low, kind=int):
    def check(value):
        try:
            v = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(
                "expected %s, got %r" % (kind.__name__, value)) from None
        if v < low:
            raise argparse.ArgumentTypeError(
                "must be at least %s, got %s" % (low, value))
        return v
    return check


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m " + _PROG, allow_abbrev=False,
        description="Start this node's worker processes for "
        "fastt.distributed (torchrun's command line). Each worker gets "
        "RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, "
        "GROUP_WORLD_SIZE, ROLE_RANK, ROLE_WORLD_SIZE, ROLE_NAME, "
        "MASTER_ADDR and MASTER_PORT. When a worker fails the others get "
        "SIGTERM (then SIGKILL) and the launcher exits with the failed "
        "worker's exit code, or 128+S when signal S killed it. SIGINT, "
        "SIGTERM and SIGHUP sent to the launcher go to every worker; it "
        "then dies of the same signal.")

    def option(name, **kw):
        names = ["--" + name]
        if "-" in name:
            names.append("--" + name.replace("-", "_"))
        p.add_argument(*names, **kw)

    option("nproc-per-node", type=_nproc, default=1, metavar="N",
           help="workers on this node: an integer, 'cpu' or 'auto' (the "
           "CPU count) (default 1)")
    option("nnodes", type=_nnodes, default=1, metavar="M",
           help="number of nodes (default 1). Each node runs its own "
           "launcher with its --node-rank; the launcher only sets the "
           "env, it does no rendezvous, so every node must use the same "
           "--nproc-per-node, --master-addr and --master-port")
    option("node-rank", type=_at_least(0), default=0, metavar="R",
           help="this node's rank, 0 to M-1 (default 0)")
    option("master-addr", default="127.0.0.1", metavar="ADDR",
           help="address of the node that runs rank 0 (default 127.0.0.1)")
    option("master-port", type=_at_least(1), default=29500, metavar="PORT",
           help="free port on the master node for rank 0's store "
           "(default 29500)")
    option("standalone", action="store_true",
           help="one node on this host: --nnodes 1, --node-rank 0, "
           "MASTER_ADDR 127.0.0.1 and a free MASTER_PORT (overrides those "
           "options)")
    option("max-restarts", type=_at_least(0), default=0, metavar="K",
           help="restart the whole worker group up to K times after a "
           "failure (default 0). Restarts are local to this node")
    option("monitor-interval", type=_at_least(0.001, float), default=0.1,
           metavar="SECONDS",
           help="how often the workers are polled (default 0.1); a "
           "worker's exit or a signal wakes the launcher at once anyway")
    option("term-timeout", type=_at_least(0.0, float), default=5.0,
           metavar="SECONDS",
           help="grace period between the SIGTERM (or forwarded signal) a "
           "worker gets on shutdown and SIGKILL (default 5)")
    option("role", default="default",
           help="ROLE_NAME of the workers (default 'default')")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script as a module: python -m script")
    option("no-python", action="store_true",
           help="run the script as an executable, without python")
    option("run-path", action="store_true",
           help="run the script with runpy.run_path in the workers' "
           "interpreter")
    p.add_argument("training_script", metavar="script",
                   help="the script (or module, or program) each worker "
                   "runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER,
                   metavar="args", help="its arguments")
    return p


def parse_args(argv=None):
    p = _parser()
    args = p.parse_args(argv)
    modes = [n for n in ("module", "no_python", "run_path")
             if getattr(args, n)]
    if len(modes) > 1:
        p.error("use only one of -m/--module, --no-python and --run-path")
    if args.standalone:
        args.nnodes, args.node_rank = 1, 0
        args.master_addr, args.master_port = "127.0.0.1", _free_port()
    if args.node_rank >= args.nnodes:
        p.error("--node-rank %d is out of range for --nnodes %d"
                % (args.node_rank, args.nnodes))
    if args.master_port > 65535:
        p.error("--master-port %d is not a port" % args.master_port)
    return args


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _say(msg):
    print("%s: %s" % (_PROG, msg), file=sys.stderr, flush=True)


def _signame(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "signal %d" % signum


def _command(args):
    script, rest = args.training_script, list(args.training_script_args)
    if args.no_python:
        return [script] + rest
    if args.module:
        return [sys.executable, "-u", "-m", script] + rest
    if args.run_path:
        return [sys.executable, "-u", "-c", _RUN_PATH, script] + rest
    return [sys.executable, "-u", script] + rest


def _base_env(args):
    env = dict(os.environ)
    n = args.nproc_per_node
    if n > 1 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = "1"
        _say("OMP_NUM_THREADS is not set: it is 1 in each of the %d "
             "workers so they do not oversubscribe the CPUs; set it to "
             "tune" % n)
    world = args.nnodes * n
    env.update({
        "LOCAL_WORLD_SIZE": str(n),
        "WORLD_SIZE": str(world),
        "GROUP_RANK": str(args.node_rank),
        "GROUP_WORLD_SIZE": str(args.nnodes),
        "ROLE_NAME": args.role,
        "ROLE_WORLD_SIZE": str(world),
        "MASTER_ADDR": args.master_addr,
        "MASTER_PORT": str(args.master_port),
        "TORCHELASTIC_MAX_RESTARTS": str(args.max_restarts),
        # fastt.distributed.is_torchelastic_launched() reads these two
        "TORCHELASTIC_RUN_ID": uuid.uuid4().hex if args.standalone
        else "none",
        "FASTT_LAUNCHED": "1",
    })
    return env


def _death_signal_preexec():
    """A preexec_fn that makes the kernel SIGKILL the worker when the
    launcher dies (even of SIGKILL); None where prctl is missing."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    option = ctypes.c_int(_PR_SET_PDEATHSIG)
    sig = ctypes.c_ulong(signal.SIGKILL)
    zero = ctypes.c_ulong(0)

    def preexec():
        prctl(option, sig, zero, zero, zero)
        if os.getppid() != parent:  # the launcher died before prctl
            os._exit(1)
    return preexec


class _Worker:
    def __init__(self, local_rank, rank, proc):
        self.local_rank, self.rank, self.proc = local_rank, rank, proc

    def send(self, signum):
        if self.proc.returncode is None:
            try:
                self.proc.send_signal(signum)
            except OSError:
                pass


class _Launcher:
    def __init__(self, args):
        self.args = args
        self.pid = os.getpid()
        self.signals = []  # received by the launcher, in order
        self.workers = []
        self.preexec = _death_signal_preexec()

    # -- signals ------------------------------------------------------------

    def _on_signal(self, signum, frame):
        # A worker between fork and exec runs Python (preexec_fn): it must
        # not act as the launcher.
        if os.getpid() == self.pid:
            self.signals.append(signum)

    def _install(self):
        self._rfd, self._wfd = os.pipe()
        for fd in (self._rfd, self._wfd):
            os.set_blocking(fd, False)
        self._old_wakeup = signal.set_wakeup_fd(
            self._wfd, warn_on_full_buffer=False)
        self._old = {}
        for name in _FORWARDED + ("SIGCHLD",):
            signum = getattr(signal, name, None)
            if signum is None:
                continue
            old = signal.getsignal(signum)
            if old == signal.SIG_IGN and name != "SIGCHLD":
                continue  # nohup and friends: the workers inherit SIG_IGN
            self._old[signum] = old
            if name == "SIGCHLD":  # only there to wake the wait up
                signal.signal(signum, lambda s, f: None)
            else:
                signal.signal(signum, self._on_signal)

    def _uninstall(self):
        for signum, old in self._old.items():
            signal.signal(signum, old if old is not None else signal.SIG_DFL)
        signal.set_wakeup_fd(self._old_wakeup)
        os.close(self._rfd)
        os.close(self._wfd)

    def _sleep(self, timeout):
        """Wait up to timeout seconds; a signal (SIGCHLD included) ends the
        wait at once through the wakeup fd."""
        select.select([self._rfd], [], [], max(timeout, 0.0))
        try:
            while os.read(self._rfd, 512):
                pass
        except BlockingIOError:
            pass

    # -- the worker group ---------------------------------------------------

    def _start(self, restart):
        args, n = self.args, self.args.nproc_per_node
        cmd = _command(args)
        for local_rank in range(n):
            if self.signals:  # stopped while starting
                return None
            rank = args.node_rank * n + local_rank
            env = dict(self._env, LOCAL_RANK=str(local_rank),
                       RANK=str(rank), ROLE_RANK=str(rank),
                       TORCHELASTIC_RESTART_COUNT=str(restart))
            try:
                # A session of its own (as torchrun): a terminal's Ctrl-C
                # reaches the launcher only, which forwards it once.
                proc = subprocess.Popen(cmd, env=env,
                                        preexec_fn=self.preexec,
                                        start_new_session=True)
            except OSError as e:
                _say("cannot start worker local_rank %d: %s" % (local_rank, e))
                # a shell's codes: 127 not found, 126 not executable
                if isinstance(e, FileNotFoundError):
                    return 127
                return 126 if isinstance(e, PermissionError) else 1
            self.workers.append(_Worker(local_rank, rank, proc))
        return None

    def _run_group(self, restart):
        """Start the workers and watch them until all have exited. Returns
        the group's exit code: 0, or the first failed worker's."""
        self.workers = []
        code = self._start(restart)
        failed = code is not None
        forwarded = 0
        deadline = None  # when the workers still alive get SIGKILL
        stop = "SIGTERM"  # the signal that began the shutdown
        if failed:
            deadline = self._stop_all(signal.SIGTERM)
        killed = False
        while True:
            while forwarded < len(self.signals):
                signum = self.signals[forwarded]
                forwarded += 1
                _say("got %s, forwarding it to the workers"
                     % _signame(signum))
                for w in self.workers:
                    w.send(signum)
                if deadline is None:
                    deadline = time.monotonic() + self.args.term_timeout
                    stop = _signame(signum)
            codes = [w.proc.poll() for w in self.workers]
            if not failed and not self.signals:
                for w, rc in zip(self.workers, codes):
                    if rc:  # the lowest local rank among those that failed
                        failed = True
                        code = self._report(w, rc)
                        deadline = self._stop_all(signal.SIGTERM)
                        break
            live = [w for w in self.workers if w.proc.poll() is None]
            if not live:
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline and not killed:
                _say("%d worker(s) still alive %gs after %s: SIGKILL"
                     % (len(live), self.args.term_timeout, stop))
                for w in live:
                    w.send(signal.SIGKILL)
                killed = True
            timeout = self.args.monitor_interval
            if deadline is not None and not killed:
                timeout = min(timeout, deadline - now)
            self._sleep(timeout)
        return code or 0

    def _report(self, w, rc):
        others = sum(1 for o in self.workers
                     if o is not w and o.proc.poll() is None)
        if rc < 0:
            how = "was killed by %s" % _signame(-rc)
            code = 128 - rc
        else:
            how = "exited with code %d" % rc
            code = rc
        msg = "worker local_rank %d (rank %d, pid %d) %s" % (
            w.local_rank, w.rank, w.proc.pid, how)
        if others:
            msg += "; stopping the %d other worker(s)" % others
        _say(msg)
        return code

    def _stop_all(self, signum):
        for w in self.workers:
            w.send(signum)
        return time.monotonic() + self.args.term_timeout

    def run(self):
        """Run the group (and its restarts); the launcher's exit code."""
        self._env = _base_env(self.args)
        self._install()
        try:
            restart = 0
            while True:
                code = self._run_group(restart)
                if self.signals:
                    return 128 + self.signals[0]
                if code == 0 or restart == self.args.max_restarts:
                    break
                restart += 1
                _say("restarting the worker group (restart %d of %d)"
                     % (restart, self.args.max_restarts))
            if code:
                _say("exiting with code %d" % code)
            return code
        finally:
            for w in self.workers:  # only after an error in the launcher
                if w.proc.poll() is None:
                    w.send(signal.SIGKILL)
                    w.proc.wait()
            self._uninstall()


def main(argv=None):
    """The command line: runs the workers, then exits (never returns). A
    launcher stopped by a signal dies of that signal once the workers have
    exited, so its own parent sees it as a shell would."""
    launcher = _Launcher(parse_args(argv))
    code = launcher.run()
    if launcher.signals:
        signum = launcher.signals[0]
        sys.stdout.flush()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    sys.exit(code)


if __name__ == "__main__":
    main()
