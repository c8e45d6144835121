"""fastt.nn.utils.stateless.functional_call (torch.func.functional_call):
runs a module with some of its parameters and buffers replaced by the
given tensors, restoring them afterwards."""

import contextlib

from fastt import Tensor

__all__ = ["functional_call"]


def _owner(module, name):
    parts = name.split(".")
    for p in parts[:-1]:
        module = getattr(module, p)
    return module, parts[-1]


@contextlib.contextmanager
def _reparametrize_module(module, tensors, tie_weights=True, strict=False,
                          stack_weights=False):
    if tie_weights:
        # A tensor given for one name also replaces the other names of the
        # same original tensor (tied weights), unless given explicitly.
        by_id = {}
        for name, t in list(module.named_parameters(remove_duplicate=False)) + \
                list(module.named_buffers(remove_duplicate=False)):
            by_id.setdefault(id(t), []).append(name)
        tensors = dict(tensors)
        for names in by_id.values():
            given = [n for n in names if n in tensors]
            if given:
                vals = {id(tensors[n]) for n in given}
                if len(vals) > 1:
                    raise ValueError(
                        f"functional_call got multiple values for keys "
                        f"{given}, which are tied. Consider using "
                        "tie_weights=False")
                for n in names:
                    tensors.setdefault(n, tensors[given[0]])
    if strict:
        expected = {n for n, _ in module.named_parameters(
            remove_duplicate=False)} | {n for n, _ in module.named_buffers(
                remove_duplicate=False)}
        missing = sorted(expected - set(tensors))
        unexpected = sorted(set(tensors) - expected)
        if missing or unexpected:
            msgs = []
            if unexpected:
                msgs.append("Unexpected key(s): " + ", ".join(
                    repr(k) for k in unexpected) + ".")
            if missing:
                msgs.append("Missing key(s): " + ", ".join(
                    repr(k) for k in missing) + ".")
            raise RuntimeError(
                "Error(s) in reparametrizing for {}:\n\t{}".format(
                    type(module).__name__, "\n\t".join(msgs)))
    saved = []
    try:
        for name, t in tensors.items():
            owner, attr = _owner(module, name)
            if attr in owner._parameters:
                saved.append((owner, "_parameters", attr,
                              owner._parameters[attr]))
                owner._parameters[attr] = t
            elif attr in owner._buffers:
                saved.append((owner, "_buffers", attr, owner._buffers[attr]))
                owner._buffers[attr] = t
            else:
                saved.append((owner, None, attr,
                              owner.__dict__.get(attr, _MISSING)))
                object.__setattr__(owner, attr, t)
        yield
    finally:
        for owner, reg, attr, old in reversed(saved):
            if reg is not None:
                getattr(owner, reg)[attr] = old
            elif old is _MISSING:
                owner.__dict__.pop(attr, None)
            else:
                object.__setattr__(owner, attr, old)


_MISSING = object()


def functional_call(module, parameters_and_buffers, args=None, kwargs=None,
                    *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with the named parameters/buffers replaced
    (a dict, or a tuple of dicts merged)."""
    if isinstance(parameters_and_buffers, (list, tuple)):
        merged = {}
        for d in parameters_and_buffers:
            for k, v in d.items():
                if k in merged:
                    raise ValueError(
                        f"{k} appeared in multiple dictionaries; behavior "
                        "of functional call is ambiguous")
                merged[k] = v
        parameters_and_buffers = merged
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    for k, v in parameters_and_buffers.items():
        if not isinstance(v, Tensor):
            raise TypeError(f"functional_call: {k} must be a Tensor, got "
                            f"{type(v).__name__}")
    with _reparametrize_module(module, parameters_and_buffers,
                               tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
