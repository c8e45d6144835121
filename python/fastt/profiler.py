"""fastt.profiler: where the time of each op goes, measured from inside.

Every kernel call is one event (recorded by the hook in csrc/dispatch.h):
its kernel time, and the framework tax before it (binding, checks,
allocation, dispatch, autograd: everything on the thread since the previous
kernel ended). Usage, as with torch.profiler::

    with fastt.profiler.profile() as prof:
        with fastt.profiler.record_function("step"):
            loss = model(x).sum(); loss.backward()
    print(prof.key_averages().table(sort_by="tax", row_limit=10))
    prof.export_chrome_trace("trace.json")   # chrome://tracing, Perfetto

New table columns go in _Avg and _COLUMNS; new sort keys in _SORT_KEYS.
"""

import contextlib
import json
import os

from . import _C

__all__ = ["profile", "record_function", "ProfilerActivity"]

_current = None  # the running profile, if any


class ProfilerActivity:
    """Accepted for torch compatibility; fastt records host-side events."""

    CPU = "CPU"
    CUDA = "CUDA"


class _Event:
    """One kernel call. Times are monotonic nanoseconds."""

    __slots__ = ("name", "tid", "t_lookup", "t_start", "t_end", "prev_end",
                 "allocs")

    def __init__(self, name, tid, t_lookup, t_start, t_end, prev_end,
                 allocs):
        self.name = name
        self.tid = tid
        self.t_lookup = t_lookup
        self.t_start = t_start
        self.t_end = t_end
        self.prev_end = prev_end
        self.allocs = allocs

    @property
    def kernel_ns(self):
        return self.t_end - self.t_start

    @property
    def tax_ns(self):
        """Time on this thread between the previous kernel and this one."""
        return self.t_start - self.prev_end

    @property
    def host_ns(self):
        return self.t_end - self.prev_end

    def __repr__(self):
        return (f"<event {self.name} tid={self.tid} tax={self.tax_ns}ns "
                f"kernel={self.kernel_ns}ns allocs={self.allocs}>")


class _Range:
    """A record_function range."""

    __slots__ = ("name", "tid", "t0", "t1")

    def __init__(self, name, tid, t0, t1):
        self.name = name
        self.tid = tid
        self.t0 = t0
        self.t1 = t1


class record_function(contextlib.ContextDecorator):
    """Marks a user range; it appears in the table and the trace."""

    def __init__(self, name, args=None):
        self.name = str(name)
        self._t0 = None

    def __enter__(self):
        self._t0 = _C._profiler_now()
        return self

    def __exit__(self, *exc):
        t1 = _C._profiler_now()
        prof = _current
        if prof is not None and self._t0 is not None:
            prof._ranges.append(_Range(self.name, _C._profiler_thread_id(),
                                       self._t0, t1))
        return False


class _Avg:
    """One row of key_averages(): an op (or a user range) over all calls.
    Times are in microseconds, as in torch."""

    def __init__(self, key, is_user_range=False):
        self.key = key
        self.is_user_range = is_user_range
        self.count = 0
        self.cpu_time_total = 0.0       # host time: tax + kernel
        self.self_cpu_time_total = 0.0  # same for ops; ranges minus ops
        self.kernel_time_total = 0.0
        self.tax_total = 0.0
        self.allocs = 0

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def tax_share(self):
        t = self.cpu_time_total
        return self.tax_total / t if t > 0 else 0.0

    def __repr__(self):
        return (f"<{self.key}: calls={self.count} "
                f"host={self.cpu_time_total:.1f}us "
                f"kernel={self.kernel_time_total:.1f}us "
                f"tax={self.tax_total:.1f}us allocs={self.allocs}>")


_SORT_KEYS = {
    "self_cpu_time_total": lambda a: a.self_cpu_time_total,
    "cpu_time_total": lambda a: a.cpu_time_total,
    "cpu_time": lambda a: a.cpu_time,
    "kernel_time": lambda a: a.kernel_time_total,
    "tax": lambda a: a.tax_total,
    "calls": lambda a: a.count,
    "count": lambda a: a.count,
    "allocs": lambda a: a.allocs,
}


def _fmt_us(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


_COLUMNS = (
    ("Calls", lambda a: str(a.count)),
    ("Host total", lambda a: _fmt_us(a.cpu_time_total)),
    ("Host mean", lambda a: _fmt_us(a.cpu_time)),
    ("Kernel", lambda a: _fmt_us(a.kernel_time_total)),
    ("Tax", lambda a: _fmt_us(a.tax_total)),
    ("Tax %", lambda a: f"{100.0 * a.tax_share:.1f}%"),
    ("Allocs", lambda a: str(a.allocs)),
)


class _KeyAverages(list):
    """key_averages(): a list of _Avg rows with torch's .table()."""

    def table(self, sort_by=None, row_limit=100, max_name_column_width=40,
              **unused):
        rows = list(self)
        if sort_by is not None:
            key = _SORT_KEYS.get(sort_by)
            if key is None:
                raise ValueError(
                    f"table: unknown sort_by {sort_by!r}; expected one of "
                    f"{sorted(_SORT_KEYS)}")
            rows.sort(key=key, reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        names = [("[" + a.key + "]") if a.is_user_range else a.key
                 for a in rows]
        w0 = min(max([4] + [len(n) for n in names]), max_name_column_width)
        cells = [[f(a) for _, f in _COLUMNS] for a in rows]
        widths = [max([len(h)] + [len(c[i]) for c in cells])
                  for i, (h, _) in enumerate(_COLUMNS)]
        head = "Name".ljust(w0) + "".join(
            "  " + h.rjust(w) for (h, _), w in zip(_COLUMNS, widths))
        rule = "-" * len(head)
        lines = [rule, head, rule]
        for n, c in zip(names, cells):
            lines.append(n[:w0].ljust(w0) + "".join(
                "  " + x.rjust(w) for x, w in zip(c, widths)))
        lines.append(rule)
        ops = [a for a in self if not a.is_user_range]
        host = sum(a.cpu_time_total for a in ops)
        kern = sum(a.kernel_time_total for a in ops)
        share = 100.0 * (host - kern) / host if host > 0 else 0.0
        lines.append(
            f"Host time in ops: {_fmt_us(host)} (kernels {_fmt_us(kern)}, "
            f"framework tax {_fmt_us(host - kern)} = {share:.1f}%); "
            f"[name] rows are record_function ranges")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


class profile:
    """Records every kernel call between __enter__ and __exit__ (or
    start() and stop()). The torch-style arguments are accepted; fastt
    always records host-side events without shapes or stacks."""

    def __init__(self, activities=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, on_trace_ready=None, enabled=True,
                 use_cuda=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.on_trace_ready = on_trace_ready
        self._events = []
        self._ranges = []
        self._t_begin = None
        self._running = False

    def start(self):
        global _current
        if not self.enabled:
            return
        _C._profiler_start()  # RuntimeError if another session runs
        self._events = []
        self._ranges = []
        self._t_begin = _C._profiler_now()
        self._running = True
        _current = self

    def stop(self):
        global _current
        if not self._running:
            return
        self._running = False
        if _current is self:
            _current = None
        self._events = [_Event(*row) for row in _C._profiler_stop()]
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def step(self):
        """torch compatibility (schedules are not supported): a no-op."""

    def events(self):
        """The recorded kernel events, each thread's in order."""
        return list(self._events)

    def key_averages(self, group_by_input_shape=False):
        rows = {}
        for e in self._events:
            a = rows.get(e.name)
            if a is None:
                a = rows[e.name] = _Avg(e.name)
            a.count += 1
            a.cpu_time_total += e.host_ns / 1e3
            a.self_cpu_time_total += e.host_ns / 1e3
            a.kernel_time_total += e.kernel_ns / 1e3
            a.tax_total += e.tax_ns / 1e3
            a.allocs += e.allocs
        by_tid = {}
        for e in self._events:
            by_tid.setdefault(e.tid, []).append(e)
        for r in self._ranges:
            key = ("range", r.name)
            a = rows.get(key)
            if a is None:
                a = rows[key] = _Avg(r.name, is_user_range=True)
            a.count += 1
            dur = (r.t1 - r.t0) / 1e3
            kern = inside = 0
            allocs = 0
            for e in by_tid.get(r.tid, ()):
                if e.t_start >= r.t0 and e.t_end <= r.t1:
                    kern += e.kernel_ns
                    inside += e.t_end - max(e.prev_end, r.t0)
                    allocs += e.allocs
            a.cpu_time_total += dur
            a.self_cpu_time_total += max(dur - inside / 1e3, 0.0)
            a.kernel_time_total += kern / 1e3
            a.tax_total += dur - kern / 1e3
            a.allocs += allocs
        return _KeyAverages(rows.values())

    def _trace_events(self):
        pid = os.getpid()
        t0 = self._t_begin if self._t_begin is not None else 0
        out = []
        bounds = {}  # per thread: sorted range boundaries
        for r in self._ranges:
            bounds.setdefault(r.tid, []).extend((r.t0, r.t1))
            out.append({"name": r.name, "cat": "user_range", "ph": "X",
                        "ts": (r.t0 - t0) / 1e3, "dur": (r.t1 - r.t0) / 1e3,
                        "pid": pid, "tid": r.tid, "args": {}})
        for b in bounds.values():
            b.sort()
        for e in self._events:
            # The tax slice must not straddle a range edge, or viewers
            # would mis-nest it: start it at the last edge inside it.
            start = e.prev_end
            for b in bounds.get(e.tid, ()):
                if b > e.t_start:
                    break
                if b > start:
                    start = b
            args = {"allocs": e.allocs, "tax_ns": e.tax_ns,
                    "kernel_ns": e.kernel_ns}
            out.append({"name": e.name + " [tax]", "cat": "framework_tax",
                        "ph": "X", "ts": (start - t0) / 1e3,
                        "dur": (e.t_start - start) / 1e3, "pid": pid,
                        "tid": e.tid, "args": args})
            out.append({"name": e.name, "cat": "kernel", "ph": "X",
                        "ts": (e.t_start - t0) / 1e3,
                        "dur": e.kernel_ns / 1e3, "pid": pid,
                        "tid": e.tid, "args": args})
        # Per thread by start; an enclosing slice before what it encloses.
        out.sort(key=lambda x: (x["tid"], x["ts"], -x["dur"]))
        return out

    def export_chrome_trace(self, path):
        """Writes Chrome trace JSON (chrome://tracing, ui.perfetto.dev):
        per op one "<op> [tax]" slice and one "<op>" kernel slice."""
        meta = [{"name": "process_name", "ph": "M", "pid": os.getpid(),
                 "tid": 0, "args": {"name": "fastt"}}]
        with open(path, "w") as f:
            json.dump({"traceEvents": meta + self._trace_events(),
                       "displayTimeUnit": "ns"}, f)
