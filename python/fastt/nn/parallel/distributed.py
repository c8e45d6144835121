"""DistributedDataParallel: torch.nn.parallel.DistributedDataParallel over
fastt.distributed (Gloo process groups), written for a small per-step cost.

How a step goes:

* construction: every rank checks that its parameters have the same count,
  sizes and dtypes as every other rank's (one all_gather of three
  integers; RuntimeError on a mismatch), then takes rank 0's parameters and
  buffers (one flattened broadcast per dtype). The parameters that require
  a gradient are split into buckets in REVERSE registration order (the
  order their gradients tend to be ready in), one dtype per bucket; a
  bucket closes as soon as it holds bucket_cap_mb or more (so one
  parameter may take it past the cap; the first bucket's cap is 1 MiB
  when bucket_cap_mb is left at its default, torch's
  dist._DEFAULT_FIRST_BUCKET_BYTES): the assignment is the one torch's
  dist._compute_bucket_assignment_by_size makes of the reversed list.
  Each bucket owns one flat buffer, allocated once; each parameter has a
  precomputed view into it and a hook closure over its bucket index.
* forward: when gradients are on and sync is wanted, the reducer state is
  reset (three list slice-assignments) and armed; buffers are broadcast
  from rank 0 first (broadcast_buffers); with find_unused_parameters the
  autograd graph is walked from the outputs and the parameters it does not
  reach are marked ready at once (their gradient, or zeros, go into the
  bucket).
* backward: each parameter's post-accumulate-grad hook copies its .grad
  into its bucket view and counts the bucket down; a complete bucket is
  all-reduced with async_op=True, so communication overlaps the rest of
  backward. Buckets are launched in bucket order on every rank (a bucket
  ready early waits for its predecessors), so the collectives match.
* the hook that launches the last bucket also finishes the step (fastt's
  engine has no end-of-backward callback; every gradient of the module is
  final by then): it waits for every bucket's Work, divides by the world
  size and copies the averages back into .grad (with
  gradient_as_bucket_view=True .grad IS the bucket view, so nothing is
  copied). backward() returns with the averaged gradients in place.
* find_unused_parameters: parameters no rank used keep their .grad as it
  was (None stays None), as torch; a small int32 all_reduce of the
  per-rank use flags, launched at the end of forward, tells them apart.
  static_graph=True walks the graph once, on the first step, and reuses
  that set of unused parameters (no flag reduction after it).

Averaging: buckets are summed and then divided by the world size (one
correctly rounded division of the exact-as-possible sum; exact when the
world size is a power of two), except float16 buckets, which are divided
before the sum so that it cannot overflow float16's small range (torch's
order). ReduceOp.AVG is not used: Gloo has no native average.

World size 1: the collectives are identities, so none is issued and,
unless gradient_as_bucket_view asks for bucket views, gradients are not
copied at all: the hooks only count, which keeps the checks (unused
parameters, no_sync) identical to a real run at a fraction of a
microsecond per parameter.

join() takes uneven inputs (see _Join). Not implemented:
register_comm_hook, mixed_precision, the rebuild of buckets in the first
iteration's gradient order, multi-device modules (device_ids /
output_device must be left out, or name the one device the module lives
on). Moving the module (.to(), .half()) after wrapping it leaves the
buckets stale: wrap the module where and as it will train, as torch
asks."""

import contextlib
import dataclasses
import weakref
import zlib

import fastt

from ..modules.module import (
    Module, _global_forward_hooks, _global_forward_pre_hooks)

__all__ = ["DistributedDataParallel"]

_MB = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25
_DEFAULT_FIRST_BUCKET_BYTES = _MB


def _distributed():
    # Lazy: `import fastt.nn` must not need fastt.distributed.
    import fastt.distributed as dist
    return dist


def _tensors_in(obj, out):
    """Appends the tensors in a (nested) forward output to `out`: lists,
    tuples, dicts and dataclasses, as torch's DDP looks."""
    if isinstance(obj, fastt.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _tensors_in(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _tensors_in(x, out)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            _tensors_in(getattr(obj, f.name), out)
    return out


def _assign_buckets(params, first_cap, cap):
    """Parameter indices per bucket: the parameters in reverse order, one
    open bucket per (dtype, device); a bucket closes once it holds at least
    its limit (the first limit of each dtype is first_cap, then cap).
    Buckets are ordered by where their first parameter falls in the
    reversed order."""
    open_ = {}
    closed = set()
    out = []
    for pos, i in enumerate(range(len(params) - 1, -1, -1)):
        p = params[i]
        key = (p.dtype, str(p.device))
        b = open_.get(key)
        if b is None:
            b = open_[key] = [pos, [], 0]
        b[1].append(i)
        b[2] += p.numel() * p.element_size()
        if b[2] >= (cap if key in closed else first_cap):
            out.append(b)
            del open_[key]
            closed.add(key)
    out.extend(open_.values())
    out.sort(key=lambda b: b[0])
    return [b[1] for b in out]


def _signature(params):
    """(count, elements, checksum of dtypes and sizes): what the ranks
    compare to agree they hold the same model."""
    h = 0
    numel = 0
    for p in params:
        numel += p.numel()
        for tok in (zlib.crc32(str(p.dtype).encode()), *p.shape, 1 << 40):
            h = (h * 1000003 + tok) % ((1 << 61) - 1)
    return [len(params), numel, h]


class _Reducer:
    """The per-step state of a DDP: everything the hooks touch lives in
    these slots (no Module.__setattr__, no dict lookups by name)."""

    __slots__ = (
        "dist", "group", "world", "comm", "copy", "as_view", "params",
        "names", "views", "bucket_of", "flats", "predivide",
        "ready", "no_buckets", "counter",
        "nb", "next", "works", "expect", "group_of", "inflight",
        "find_unused", "static_graph",
        "static_unused", "global_unused", "used_work", "used_map",
        "divisor", "__weakref__")

    def __init__(self, dist, group, world, params, names, first_cap, cap,
                 as_view, find_unused, static_graph):
        self.dist = dist
        self.group = group
        self.world = world
        self.divisor = world   # join(divide_by_initial_world_size=False)
        self.comm = world > 1
        self.as_view = as_view
        # Gradients go through the buckets only when they are summed or
        # must become bucket views.
        self.copy = self.comm or as_view
        self.params = params
        self.names = names
        # static_graph: the first step walks the graph like find_unused.
        self.find_unused = find_unused or static_graph
        self.static_graph = static_graph
        self.static_unused = None  # static_graph: the first step's set
        # Indices no rank used (their .grad is left alone); None: every
        # parameter is expected to get a gradient.
        self.global_unused = None
        self.used_work = None
        self.used_map = None
        buckets = _assign_buckets(params, first_cap, cap)
        n = len(params)
        self.views = [None] * n
        self.bucket_of = [0] * n
        self.flats = []
        self.predivide = []
        for b, idx in enumerate(buckets):
            p0 = params[idx[0]]
            total = sum(params[i].numel() for i in idx)
            flat = fastt.zeros(total, dtype=p0.dtype, device=p0.device)
            off = 0
            for i in idx:
                k = params[i].numel()
                v = flat[off:off + k].view(params[i].shape)
                self.views[i] = v
                self.bucket_of[i] = b
                off += k
            self.flats.append(flat)
            self.predivide.append(p0.dtype == fastt.float16)
        self.nb = len(buckets)
        self.group_of = self.bucket_of
        if not self.comm:
            # Nothing is sent: the hooks count all parameters as one
            # group (readiness still drives the checks and the finish).
            self.group_of = [0] * n
            self.nb = 1
        self.no_buckets = [False] * self.nb
        self.ready = [False] * self.nb
        self.works = [None] * self.nb
        self.next = 0
        self.inflight = False  # collectives launched, not yet waited for
        # The per-parameter hooks are C++ (csrc/distributed/reducer.h): each
        # copies its .grad into its bucket view and counts its bucket down;
        # the last one calls bucket_ready. Armed by a forward that wants a
        # sync, disarmed by finish(); its done() is 1 for a parameter whose
        # hook fired this step, 2 for one marked unused.
        ref = weakref.ref(self)   # no cycle through the C++ callbacks

        def on_ready(b):
            ref().bucket_ready(b)

        def on_twice(i):
            ref()._twice(i)

        # A world of one has nothing to launch or hand back per step
        # (gradients stay in .grad): no Python call from backward at all.
        self.counter = fastt._C._distributed._GradCounter(
            list(params), list(self.group_of), list(self.views), self.copy,
            as_view, on_ready if self.comm or as_view else None, on_twice)

    def remove_hooks(self):
        self.counter.remove_hooks()

    # ---- per step ----
    def drain(self):
        # A forward armed a step that never finished (forward twice, no
        # backward) but launched collectives: let them end before the
        # buckets are written again.
        for k in range(self.nb):
            if self.works[k] is not None:
                self.works[k].wait()
                self.works[k] = None
        if self.used_work is not None:
            self.used_work.wait()
            self.used_work = None
        self.next = 0
        self.inflight = False

    def mark_unused(self, i):
        """Param i gets no gradient this step: what its .grad holds (zeros
        when it has none) goes into the reduction now."""
        self.counter.mark(i, 2)

    def bucket_ready(self, b):
        ready = self.ready
        ready[b] = True
        k = self.next
        nb = self.nb
        while k < nb and ready[k]:
            if self.comm:
                flat = self.flats[k]
                if self.predivide[k]:
                    flat.div_(self.divisor)
                self.works[k] = self.dist.all_reduce(
                    flat, group=self.group, async_op=True)
                self.inflight = True
            k += 1
        self.next = k
        if k == nb:
            self.finish()

    def finish(self):
        """All buckets launched: wait, average, hand the gradients back."""
        self.next = 0     # (the counter disarmed itself: all groups done)
        self.inflight = False
        if not self.comm:
            if self.as_view and self.global_unused is not None:
                self._views_to_unset_grads(self.global_unused)
            return
        works = self.works
        world = self.divisor
        for k in range(self.nb):
            works[k].wait()
            works[k] = None
            if not self.predivide[k]:
                self.flats[k].div_(world)
        skip = self.global_unused
        if self.used_work is not None:
            self.used_work.wait()
            self.used_work = None
            skip = [i for i, c in enumerate(self.used_map.tolist())
                    if c == 0]
            if self.static_graph:
                self.global_unused = skip
        if self.as_view:
            if skip is not None:
                self._views_to_unset_grads(skip)
            return
        views = self.views
        skip = set(skip) if skip else ()
        for i, p in enumerate(self.params):
            if i in skip:
                continue
            g = p.grad
            if g is None:
                p.grad = views[i].clone()
            else:
                g.copy_(views[i])

    def _views_to_unset_grads(self, skip):
        # gradient_as_bucket_view: the parameters without a .grad (unused
        # here, used on some rank) get their bucket view.
        skip = set(skip)
        for i, p in enumerate(self.params):
            if p.grad is None and i not in skip:
                p.grad = self.views[i]

    def after_forward(self, output):
        """find_unused_parameters / static_graph: marks the parameters the
        output does not depend on ready (static_graph: the first step's
        finding is kept)."""
        if self.static_unused is not None:
            unused = self.static_unused
        else:
            unused = self._unreachable(output)
            if self.static_graph:
                self.static_unused = unused
            if not self.comm:
                self.global_unused = unused
            else:
                # Which parameters some rank uses: summed while the
                # backward runs, read when the step finishes.
                used = [1] * len(self.params)
                for i in unused:
                    used[i] = 0
                self.used_map = fastt.tensor(used, dtype=fastt.int32)
                self.used_work = self.dist.all_reduce(
                    self.used_map, group=self.group, async_op=True)
                self.inflight = True
        for i in unused:
            self.mark_unused(i)

    def _unreachable(self, output):
        """Indices of the parameters whose AccumulateGrad node the output's
        graph does not reach."""
        index = {}
        for i, p in enumerate(self.params):
            index.setdefault(p.data_ptr(), []).append(i)
        reached = set()
        seen = set()
        stack = []
        for t in _tensors_in(output, []):
            fn = t.grad_fn
            if fn is not None:
                stack.append(fn)
            elif t.requires_grad:
                reached.update(index.get(t.data_ptr(), ()))
        while stack:
            fn = stack.pop()
            if fn in seen:
                continue
            seen.add(fn)
            nxt = fn.next_functions
            if not nxt and fn.name() == "AccumulateGrad":
                reached.update(index.get(fn.variable.data_ptr(), ()))
                continue
            for f, _ in nxt:
                if f is not None and f not in seen:
                    stack.append(f)
        return [i for i in range(len(self.params)) if i not in reached]

    # ---- errors ----
    def _twice(self, i):
        raise RuntimeError(
            "DistributedDataParallel: expected to mark a parameter ready "
            f"only once per iteration, but parameter {self.names[i]!r} "
            f"(index {i}) was marked twice. Either a parameter is used "
            "outside the forward() of the DDP module, or "
            "find_unused_parameters=True marked it unused while it still "
            "received a gradient (e.g. through a tensor not returned by "
            "forward()).")

    def unfinished(self):
        missing = [f"{self.names[i]!r} (index {i})"
                   for i, d in enumerate(self.counter.done()) if not d]
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration "
            "before starting a new one. This error indicates that your "
            "module has parameters that were not used in producing loss. "
            "You can enable unused parameter detection by passing the "
            "keyword argument `find_unused_parameters=True` to "
            "`fastt.nn.parallel.DistributedDataParallel`, and by making "
            "sure all `forward` function outputs participate in "
            "calculating loss. Parameters that did not receive a gradient "
            "on this rank: " + ", ".join(missing))


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel: data-parallel training
    of `module` over the ranks of `process_group` (the default group when
    None). The model is taken from rank 0 at construction; each backward
    averages the gradients over the ranks, bucket by bucket, while it
    runs. See the module docstring for the mechanics."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False,
                 static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None,
                 device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(
                "DistributedDataParallel expects a fastt.nn.Module, got "
                f"{type(module).__name__}")
        for name, value in (
                ("delay_all_reduce_named_params",
                 delay_all_reduce_named_params),
                ("param_to_hook_all_reduce", param_to_hook_all_reduce),
                ("mixed_precision", mixed_precision),
                ("device_mesh", device_mesh)):
            if value is not None:
                raise NotImplementedError(
                    f"fastt's DistributedDataParallel has no {name}")
        dist = _distributed()
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module "
                "doesn't have any parameter that requires a gradient.")
        devices = {str(p.device) for p in module.parameters()}
        if len(devices) > 1:
            raise ValueError(
                "DistributedDataParallel: the module's parameters live on "
                f"several devices {sorted(devices)}; fastt supports "
                "single-device modules only")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError(
                "DistributedDataParallel: device_ids can name one device "
                f"at most (got {device_ids}); use one process per device")
        if (device_ids or output_device is not None) and "cpu" in devices:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device "
                "arguments only work with single-device GPU modules, but "
                f"got device_ids {device_ids}, output_device "
                f"{output_device}, and module parameters {devices}.")
        self.module = module
        self.device_ids = list(device_ids) if device_ids else None
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.process_group = process_group
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        if bucket_cap_mb is None:
            bucket_cap_mb = _DEFAULT_BUCKET_CAP_MB
            first = getattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES",
                            _DEFAULT_FIRST_BUCKET_BYTES)
        else:
            first = None
        cap = int(bucket_cap_mb * _MB)
        self.bucket_bytes_cap = cap
        if first is None or first > cap:
            first = cap

        self.world_size = dist.get_world_size(process_group)
        self.rank = dist.get_rank(process_group)
        self._joiner = None    # the active join() context, if any

        named = [(n, p) for n, p in module.named_parameters()]
        self._module_params = [p for _, p in named]
        self._module_buffers = [b for b in module.buffers()]
        if self.world_size > 1:
            self._verify_same_model([p for _, p in named])
            if init_sync:
                self._broadcast_coalesced(
                    [p for _, p in named] + self._module_buffers)
        trained = [(n, p) for n, p in named if p.requires_grad]
        self._reducer = _Reducer(
            dist, process_group, self.world_size, [p for _, p in trained],
            [n for n, _ in trained], first, cap, gradient_as_bucket_view,
            find_unused_parameters, static_graph)
        self._buffer_flats = None
        self._sync_buffers_on = (broadcast_buffers and self.world_size > 1
                                 and bool(self._module_buffers))
        if self._sync_buffers_on:
            self._buffer_flats = self._flatten_by_dtype(self._module_buffers)

    def __del__(self):
        # The hooks hold the reducer, the reducer holds the parameters:
        # unhook so that the bare module trains alone again and nothing
        # leaks through the C++ side of the hooks.
        r = self.__dict__.get("_reducer")
        if r is not None:
            try:
                r.remove_hooks()
            except Exception:  # interpreter shutdown
                pass

    # ---- construction helpers ----
    def _verify_same_model(self, params):
        dist = _distributed()
        mine = fastt.tensor(_signature(params), dtype=fastt.int64)
        got = [fastt.zeros(3, dtype=fastt.int64)
               for _ in range(self.world_size)]
        dist.all_gather(got, mine, group=self.process_group)
        ref = mine.tolist()
        for r, t in enumerate(got):
            other = t.tolist()
            if other != ref:
                raise RuntimeError(
                    "DistributedDataParallel expects the same model on "
                    f"every rank, but rank {self.rank} has {ref[0]} "
                    f"parameters ({ref[1]} elements) while rank {r} has "
                    f"{other[0]} parameters ({other[1]} elements)"
                    + ("" if other[:2] != ref[:2] else
                       " of other sizes or dtypes"))

    @staticmethod
    def _flatten_by_dtype(tensors):
        """[(flat, [(tensor, its view in flat)])], one flat buffer per
        dtype holding that dtype's tensors back to back."""
        groups = {}
        for t in tensors:
            groups.setdefault(t.dtype, []).append(t)
        out = []
        for dtype, ts in groups.items():
            total = sum(t.numel() for t in ts)
            if total == 0:
                continue
            flat = fastt.empty(total, dtype=dtype, device=ts[0].device)
            pairs = []
            off = 0
            for t in ts:
                n = t.numel()
                pairs.append((t, flat[off:off + n].view(t.shape)))
                off += n
            out.append((flat, pairs))
        return out

    def _broadcast_coalesced(self, tensors):
        self._broadcast_flats(_distributed(), self._flatten_by_dtype(tensors))

    def _broadcast_flats(self, dist, flats, root=0):
        """Group rank root's tensors to every rank, one broadcast per flat
        buffer ((flat, [(tensor, its view in flat)]) pairs)."""
        src = self.rank == root
        with fastt.no_grad():
            for flat, pairs in flats:
                if src:
                    for t, v in pairs:
                        v.copy_(t)
                self._broadcast(dist, flat, root)
                if not src:
                    for t, v in pairs:
                        t.copy_(v)

    def _broadcast(self, dist, flat, root=0):
        if flat.dtype == fastt.bool:
            # Collectives move numbers: a bool buffer travels as bytes.
            tmp = flat.to(fastt.uint8)
            dist.broadcast(tmp, group=self.process_group, group_src=root)
            flat.copy_(tmp)
        else:
            dist.broadcast(flat, group=self.process_group, group_src=root)

    def _sync_buffers(self, root=0):
        """The module's buffers from group rank root to all. Re-read each
        time (a module may assign a new tensor to a buffer name); the flat
        buffers are rebuilt when the set changed."""
        bufs = list(self.module.buffers())
        if len(bufs) != len(self._module_buffers) or any(
                a is not b for a, b in zip(bufs, self._module_buffers)):
            self._module_buffers = bufs
            self._buffer_flats = self._flatten_by_dtype(bufs)
        self._broadcast_flats(self._reducer.dist, self._buffer_flats, root)

    # ---- running ----
    def __call__(self, *inputs, **kwargs):
        # Module.__call__ would pack the arguments, then forward() would
        # pack them again: skip a level when no forward hook is set.
        if (self._fastt_hooked or _global_forward_hooks
                or _global_forward_pre_hooks):
            return self._call_impl(*inputs, **kwargs)
        return self._run(inputs, kwargs)

    def forward(self, *inputs, **kwargs):
        return self._run(inputs, kwargs)

    def _run(self, inputs, kwargs):
        r = self._reducer
        sync = False
        if fastt.is_grad_enabled():
            sync = self.require_backward_grad_sync
            if self._joiner is not None:
                self._joiner.active_step(sync)
            if r.counter.begin(sync):   # the last backward did not finish
                r.unfinished()
            if sync:
                if r.inflight:
                    r.drain()
                r.ready[:] = r.no_buckets
        if self._sync_buffers_on and self.require_forward_param_sync:
            self._sync_buffers(0 if self._joiner is None
                               else self._joiner.buffer_root)
        output = self.module(*inputs, **kwargs)
        if sync and r.find_unused:
            r.after_forward(output)
        if sync != self.require_forward_param_sync:
            self.require_forward_param_sync = sync
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of the backward passes run inside accumulate locally
        in .grad with no communication; the first synced backward after
        it averages the accumulated sums."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """Training with uneven inputs (torch's DDP.join): inside the
        context each rank runs its own number of steps; a rank whose
        inputs are exhausted leaves the body and then shadows the others'
        collectives (zeros for its gradients) until every rank is done;
        finally the parameters and buffers of the rank that ran the most
        steps go to all. Gradients are averaged over the initial world size,
        or over the ranks still training (divide_by_initial_world_size=
        False). Each training forward inside costs one small all_reduce."""
        return _Join(self, divide_by_initial_world_size, enable,
                     throw_on_early_termination)

    def _get_ddp_buckets(self):
        """The parameter names of each bucket, in launch order (for tests
        and debugging)."""
        r = self._reducer
        out = [[] for _ in r.flats]
        for i in range(len(r.params)):
            out[r.bucket_of[i]].append(r.names[i])
        return out


class _Join:
    """DistributedDataParallel.join's context. Every training forward of
    a rank still in the body all-gathers [1, syncs gradients, broadcasts
    buffers]; a rank that left sends zeros and, from what it gathers,
    shadows that step's collectives; when no rank is left in its body
    every rank ends. Buffers come from the highest rank still training
    (rank 0 may have left with stale ones), as torch does."""

    def __init__(self, ddp, divide_by_initial, enable, throw):
        self.ddp = ddp
        self.divide_by_initial = divide_by_initial
        self.enable = enable
        self.throw = throw
        self.steps = 0
        self.buffer_root = 0

    def __enter__(self):
        if self.enable:
            if self.ddp._joiner is not None:
                raise RuntimeError("DistributedDataParallel.join() is "
                                   "already active")
            self.ddp._joiner = self
        return self

    def _exchange(self, values):
        """(ranks still training, gradients synced?, buffers synced?);
        sets buffer_root to the highest rank still training."""
        ddp = self.ddp
        n = ddp.world_size
        out = fastt.zeros(3 * n, dtype=fastt.int64)
        ddp._reducer.dist.all_gather_into_tensor(
            out, fastt.tensor(values, dtype=fastt.int64),
            group=ddp.process_group)
        rows = out.view(n, 3).tolist()
        live = [r for r in range(n) if rows[r][0]]
        if live:
            self.buffer_root = live[-1]
        return (len(live), any(row[1] for row in rows),
                any(row[2] for row in rows))

    def _early(self, active):
        if self.throw and active < self.ddp.world_size:
            raise RuntimeError("Detected at least one rank that exhausted "
                               "inputs. Throwing across all ranks.")

    def active_step(self, sync):
        ddp = self.ddp
        bufs = ddp._sync_buffers_on and ddp.require_forward_param_sync
        active, _, _ = self._exchange([1, int(sync), int(bufs)])
        self._early(active)
        if not self.divide_by_initial:
            ddp._reducer.divisor = active
        self.steps += bool(sync)

    def __exit__(self, exc_type, exc, tb):
        if not self.enable:
            return False
        ddp = self.ddp
        try:
            if exc_type is not None:
                return False   # the others find out through the timeout
            r = ddp._reducer
            dist = r.dist
            while True:
                active, syncing, bufs = self._exchange([0, 0, 0])
                if active == 0:
                    break
                self._early(active)
                if bufs:
                    ddp._sync_buffers(self.buffer_root)
                if syncing:
                    if r.find_unused and r.static_unused is None:
                        dist.all_reduce(
                            fastt.zeros(len(r.params), dtype=fastt.int32),
                            group=ddp.process_group)
                    for flat in r.flats:
                        dist.all_reduce(fastt.zeros_like(flat),
                                        group=ddp.process_group)
            # The rank with the most steps (ties: the highest) holds the
            # model every rank keeps (its buffers too, with
            # broadcast_buffers).
            world = ddp.world_size
            key = fastt.tensor([self.steps * world + ddp.rank])
            dist.all_reduce(key, op=dist.ReduceOp.MAX,
                            group=ddp.process_group)
            root = int(key.item()) % world
            state = list(ddp._module_params)
            if ddp.broadcast_buffers:
                state += list(ddp.module.buffers())
            ddp._broadcast_flats(dist, ddp._flatten_by_dtype(state), root)
        finally:
            ddp._joiner = None
            ddp._reducer.divisor = ddp.world_size
        return False
