"""fastt.random: the default generator's seed and state (torch.random),
and fork_rng."""

import contextlib

from . import _C

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "fork_rng"]

manual_seed = _C.manual_seed
seed = _C.seed
initial_seed = _C.initial_seed


def get_rng_state():
    """The default generator's state as a uint8 tensor (its seed and
    Philox offset)."""
    return _C.tensor(list(_C._get_rng_state()), dtype=_C.uint8)


def set_rng_state(new_state):
    """Restores a state returned by get_rng_state."""
    if not isinstance(new_state, _C.Tensor) or new_state.dtype != _C.uint8:
        raise TypeError(
            "set_rng_state: expected a torch.ByteTensor (uint8), got "
            f"{type(new_state).__name__}"
            + (f" of dtype {new_state.dtype}"
               if isinstance(new_state, _C.Tensor) else ""))
    _C._set_rng_state(bytes(new_state.cpu().tolist()))


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng",
             _devices_kw="devices", device_type="cuda"):
    """Restores the random state on exit (one generator serves CPU and
    CUDA ops in fastt)."""
    if not enabled:
        yield
        return
    state = _C._get_rng_state()
    try:
        yield
    finally:
        _C._set_rng_state(state)
