"""fastt.autograd.graph: saved-tensor hooks (torch's), over the C++
tape's hook stack (every tensor a node saves goes through pack_hook while
the hooks are active; unpack_hook gives it back in backward)."""

import contextlib

from .. import _C

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "Node"]

Node = _C._GradFn


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor) -> obj`` runs when an op saves a
    tensor for backward and ``unpack_hook(obj) -> tensor`` when backward
    needs it. The innermost active pair applies."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled_message[0] is not None:
            raise RuntimeError(_disabled_message[0])
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _C._pop_saved_tensors_hooks()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors live on the CPU (pinned if asked) until backward moves
    them back to their device."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            if t.device.type == "cpu":
                return (t.device, t)
            cpu = t.to("cpu")
            if pin_memory and hasattr(cpu, "pin_memory"):
                cpu = cpu.pin_memory()
            return (t.device, cpu)

        def unpack(packed):
            device, t = packed
            return t.to(device, non_blocking=pin_memory)

        super().__init__(pack, unpack)


_disabled_message = [None]


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside the block, entering saved_tensors_hooks raises
    RuntimeError(error_message)."""
    prev = _disabled_message[0]
    _disabled_message[0] = error_message
    try:
        yield
    finally:
        _disabled_message[0] = prev
