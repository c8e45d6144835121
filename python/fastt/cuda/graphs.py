"""CUDA graphs (torch.cuda.graphs' API) over kernels/cuda/graph.h: the work
a block of code queues on a capture stream is recorded, not run, into a
graph whose memory comes from a private pool; ``replay()`` launches the
whole graph with one ``cudaGraphLaunch``.

As in torch, a graph replays fixed work on fixed memory: copy new inputs
into the tensors the capture read and read results from the tensors it
wrote. Work on the host and on other streams is not captured; anything
that waits for the device (``item()``, printing a CUDA tensor,
``synchronize()``) fails the capture, and random ops raise (a replay would
draw the capture's numbers again)."""

import gc

from .. import _C

__all__ = ["CUDAGraph", "graph", "graph_pool_handle",
           "is_current_stream_capturing", "make_graphed_callables"]

_MODES = {"global": 0, "thread_local": 1, "relaxed": 2}


class _PoolHandle:
    """An opaque handle on a graph memory pool (torch's is a tuple of
    ints): graphs captured with it share its memory."""

    __slots__ = ("_h",)

    def __init__(self, h):
        self._h = h

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _C._cuda_graph_pool_destroy(h)

    def __repr__(self):
        return f"<fastt.cuda graph pool {self._h:#x}>"


def graph_pool_handle():
    """A new memory pool for graphs to share (pass it as ``pool=``)."""
    from . import _require, current_device
    _require("graph_pool_handle")
    return _PoolHandle(_C._cuda_graph_pool_create(current_device()))


def is_current_stream_capturing():
    """Whether CUDA graph capture is under way on the current stream."""
    from . import is_available
    if not is_available():
        return False
    return bool(_C._cuda_is_capturing(None))


class CUDAGraph:
    """A CUDA graph (torch.cuda.CUDAGraph). Capture with
    ``fastt.cuda.graph(g)`` or capture_begin()/capture_end() on a
    non-default stream; then ``replay()``."""

    def __init__(self, keep_graph=False):
        from . import _require
        _require("CUDAGraph")
        self._h = _C._cuda_graph_create()

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _C._cuda_graph_destroy(h)

    def capture_begin(self, pool=None, capture_error_mode="global"):
        """Begins capturing the current stream. ``pool``: a handle from
        graph_pool_handle() or another graph's pool() to share memory
        with."""
        if capture_error_mode not in _MODES:
            raise ValueError(
                "capture_error_mode must be 'global', 'thread_local' or "
                f"'relaxed', got {capture_error_mode!r}")
        if pool is not None and not isinstance(pool, _PoolHandle):
            raise TypeError("CUDAGraph.capture_begin: pool must come from "
                            "graph_pool_handle() or CUDAGraph.pool()")
        _C._cuda_graph_capture_begin(
            self._h, None if pool is None else pool._h,
            _MODES[capture_error_mode])

    def capture_end(self):
        """Ends the capture and instantiates the graph."""
        _C._cuda_graph_capture_end(self._h)

    def instantiate(self):
        """The graph is instantiated by capture_end() already."""

    def replay(self):
        """Launches the captured work on the current stream."""
        _C._cuda_graph_replay(self._h)

    def reset(self):
        """Drops the captured graph and its hold on the memory pool."""
        _C._cuda_graph_reset(self._h)

    def pool(self):
        """A handle on this graph's memory pool, for other captures to
        share (None before a capture)."""
        h = _C._cuda_graph_pool(self._h)
        return _PoolHandle(h) if h else None


class graph:  # noqa: N801 - torch.cuda.graph
    """``with fastt.cuda.graph(g): ...`` captures the block into g, on
    ``stream`` (by default one side stream shared by all captures), after
    synchronizing the device and freeing cached memory as torch does."""

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None,
                 capture_error_mode="global"):
        from . import Stream
        if self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = Stream()
        self.pool = pool
        self.capture_stream = (stream if stream is not None
                               else self.__class__.default_capture_stream)
        self.cuda_graph = cuda_graph
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        from . import empty_cache, stream, synchronize
        synchronize()
        gc.collect()
        empty_cache()
        self.stream_ctx = stream(self.capture_stream)
        self.stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(
                self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.cuda_graph.capture_end()
            else:
                self.cuda_graph.reset()  # the block raised: no graph
        finally:
            self.stream_ctx.__exit__(None, None, None)
        return False


def _flat_tensors(x, out):
    if isinstance(x, _C.Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _flat_tensors(v, out)
    else:
        raise TypeError("make_graphed_callables: arguments and outputs "
                        "must be tensors or (nested) tuples of tensors, "
                        f"got {type(x).__name__}")
    return out


def make_graphed_callables(callables, sample_args, num_warmup_iters=3,
                           allow_unused_input=False, pool=None):
    """Graphed versions of callables (functions or modules): each one's
    forward and backward are captured as two graphs from
    ``sample_args`` and run by an autograd Function, as torch's
    make_graphed_callables. Arguments and outputs are tensors (or tuples
    of them) whose shapes, dtypes and requires_grad match the samples;
    module hooks are not allowed; a module's parameters get gradients as
    usual. Several callables share one memory pool and must run as
    captured: their forwards in order, their backwards in reverse."""
    import fastt
    from . import Stream, current_stream, stream as stream_ctx, synchronize
    just_one = False
    if not isinstance(callables, tuple):
        just_one = True
        callables = (callables,)
        sample_args = (sample_args,)
    if len(callables) != len(sample_args):
        raise ValueError("make_graphed_callables: one tuple of sample "
                         "arguments per callable")
    Module = fastt.nn.Module
    for c in callables:
        if isinstance(c, Module):
            if (c._forward_hooks or c._forward_pre_hooks
                    or c._backward_hooks):
                raise RuntimeError(
                    "make_graphed_callables: modules must not have hooks "
                    "registered at the time they are passed")
    mempool = graph_pool_handle() if pool is None else pool
    side = Stream()
    parts = []
    for c, args in zip(callables, sample_args):
        args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
        inputs = _flat_tensors(args, [])
        params = (tuple(p for p in c.parameters() if p.requires_grad)
                  if isinstance(c, Module) else ())
        diff_in = tuple(t for t in inputs if t.requires_grad) + params
        parts.append({"c": c, "args": args, "inputs": inputs,
                      "params": params, "diff_in": diff_in})
    synchronize()
    side.wait_stream(current_stream())
    with stream_ctx(side):
        for p in parts:
            for _ in range(num_warmup_iters):
                outs = _flat_tensors(p["c"](*p["args"]), [])
                grad_outs = [o for o in outs if o.requires_grad]
                if grad_outs and p["diff_in"]:
                    fastt.autograd.grad(
                        grad_outs, p["diff_in"],
                        grad_outputs=[fastt.empty_like(o) for o in grad_outs],
                        allow_unused=allow_unused_input)
                del outs, grad_outs
    synchronize()
    # As torch: every forward in order, then the backwards in reverse, all
    # in one pool, so that memory a later graph reuses is what the graphs
    # before it in that order (fwd1, fwd2, ..., bwd2, bwd1: how training
    # runs them) are done with.
    for p in parts:
        p["fwd"], p["bwd"] = CUDAGraph(), CUDAGraph()
        with graph(p["fwd"], pool=mempool):
            p["out"] = p["c"](*p["args"])
        p["static_outs"] = _flat_tensors(p["out"], [])
        p["need"] = [o for o in p["static_outs"] if o.requires_grad]
        p["static_grad_outs"] = [fastt.empty_like(o) for o in p["need"]]
    for p in reversed(parts):
        p["static_grads"] = ()
        if p["need"] and p["diff_in"]:
            with graph(p["bwd"], pool=mempool):
                p["static_grads"] = fastt.autograd.grad(
                    p["need"], p["diff_in"],
                    grad_outputs=p["static_grad_outs"],
                    allow_unused=allow_unused_input)
    results = [_graphed(p["c"], p["args"], p["inputs"], p["params"],
                        p["diff_in"], p["fwd"], p["bwd"], p["out"],
                        p["static_outs"], p["need"], p["static_grad_outs"],
                        p["static_grads"]) for p in parts]
    return results[0] if just_one else tuple(results)


def _graphed(c, args, inputs, params, diff_in, fwd, bwd, out, static_outs,
             need, static_grad_outs, static_grads):
    import fastt
    n_in = len(inputs)
    need_ids = {id(o) for o in need}

    class Graphed(fastt.autograd.Function):
        @staticmethod
        def forward(ctx, *ins):
            for dst, src in zip(inputs, ins[:n_in]):
                if dst.data_ptr() != src.data_ptr():
                    dst.copy_(src)
            fwd.replay()
            return tuple(o.detach() for o in static_outs)

        @staticmethod
        def backward(ctx, *grads):
            k = 0
            for o, g in zip(static_outs, grads):
                if id(o) in need_ids:
                    if g is None:
                        static_grad_outs[k].zero_()
                    else:
                        static_grad_outs[k].copy_(g)
                    k += 1
            if static_grads:
                bwd.replay()
            by_id = dict(zip((id(t) for t in diff_in), static_grads))
            res = [None if by_id.get(id(t)) is None
                   else by_id[id(t)].detach()
                   for t in tuple(inputs) + tuple(params)]
            return tuple(res)

    spec = out

    def rebuild(x, it):
        if isinstance(x, _C.Tensor):
            return next(it)
        return type(x)(rebuild(v, it) for v in x)

    def functionalized(*user_args):
        flat = _flat_tensors(tuple(user_args), [])
        if len(flat) != n_in:
            raise ValueError("graphed callable: expected "
                             f"{n_in} tensor arguments, got {len(flat)}")
        for t, s in zip(flat, inputs):
            if (t.shape != s.shape or t.dtype != s.dtype
                    or t.device != s.device):
                raise ValueError(
                    "graphed callable: arguments must match the sample "
                    f"arguments' shapes, dtypes and devices (got "
                    f"{tuple(t.shape)} {t.dtype}, captured "
                    f"{tuple(s.shape)} {s.dtype})")
        outs = Graphed.apply(*flat, *params)
        return rebuild(spec, iter(outs))

    if isinstance(c, fastt.nn.Module):
        orig = c.forward

        def forward(*user_args):
            if c.training == graphed_training:
                return functionalized(*user_args)
            return orig(*user_args)
        graphed_training = c.training
        c.forward = forward
        return c
    return functionalized
