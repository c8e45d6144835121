"""fastt.amp.GradScaler: torch's dynamic loss scaling (scale, unscale_,
step skipped on inf/NaN gradients, update with growth and backoff,
state_dict)."""

import warnings
from collections import defaultdict
from enum import Enum

from .. import _C

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = str(device)
        self._enabled = bool(enabled)
        if self._device == "cuda" and self._enabled:
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA "
                              "is not available.  Disabling.")
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(
                _refresh_per_optimizer_state)

    def _lazy_init(self, dev):
        self._scale = _C.full((), self._init_scale, dtype=_C.float32,
                              device=dev)
        self._growth_tracker = _C.full((), self._init_growth_tracker,
                                       dtype=_C.int32, device=dev)

    def scale(self, outputs):
        """outputs multiplied by the scale factor (tensors in nested
        lists/tuples too)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, _C.Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        def apply(v):
            if isinstance(v, _C.Tensor):
                if self._scale is None:
                    self._lazy_init(v.device)
                return v * self._scale.to(device=v.device)
            if isinstance(v, (list, tuple)):
                out = [apply(x) for x in v]
                return type(v)(out) if isinstance(v, tuple) else out
            if hasattr(v, "__iter__"):
                return map(apply, v)
            raise ValueError("outputs must be a Tensor or an iterable of "
                             "Tensors")
        return apply(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf,
                        allow_fp16):
        per_device = {}
        with _NoGrad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype == _C.float16:
                        raise ValueError(
                            "Attempting to unscale FP16 gradients.")
                    dev = g.device
                    key = str(dev)
                    if key not in per_device:
                        per_device[key] = found_inf.to(device=dev).clone()
                    bad = (~_C.isfinite(g)).any()
                    per_device[key] = _C.maximum(per_device[key],
                                                 bad.to(_C.float32))
                    g.mul_(inv_scale.to(device=dev, dtype=g.dtype)
                           if g.dtype != _C.float32 else
                           inv_scale.to(device=dev))
        return per_device

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale (once per step)
        and records whether any of them is inf or NaN."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since "
                "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = _C.full((), 0.0, dtype=_C.float32,
                            device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step() unless the (unscaled) gradients hold inf or NaN;
        returns its result (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if "
                               "GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the "
                               "last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this "
                                 "optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Backs the scale off after a step with inf/NaN gradients, grows it
        after growth_interval clean steps (or sets new_scale)."""
        if not self._enabled:
            return
        _scale, _tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                if not (isinstance(new_scale, _C.Tensor)
                        and new_scale.numel() == 1
                        and new_scale.dtype == _C.float32
                        and not new_scale.requires_grad):
                    raise AssertionError(
                        "new_scale should be a float or a 1-element "
                        "torch.cuda.FloatTensor or torch.FloatTensor with "
                        "requires_grad=False.")
                self._scale.copy_(new_scale)
        else:
            found = [f for st in self._per_optimizer_states.values()
                     for f in st["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to "
                                     "update.")
            inf = any(f.item() > 0 for f in found)
            if inf:
                self._scale.mul_(self._backoff_factor)
                self._growth_tracker.fill_(0)
            else:
                t = int(self._growth_tracker.item()) + 1
                if t == self._growth_interval:
                    self._scale.mul_(self._growth_factor)
                    t = 0
                self._growth_tracker.fill_(t)
        self._per_optimizer_states = defaultdict(
            _refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss "
               "or outputs) earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(
                f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(
                f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else \
            self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None \
            else int(self._growth_tracker.item())

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(),
                "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was "
                "saved from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


class _NoGrad:
    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
