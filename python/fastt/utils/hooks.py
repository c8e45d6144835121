"""fastt.utils.hooks: RemovableHandle and BackwardHook (torch's), the
machinery of Module.register_full_backward_hook/_pre_hook: the module's
tensor inputs and outputs pass through identity autograd Functions whose
backward sees the gradients of the outputs (pre-hooks may replace them)
and then those of the inputs (hooks may replace them)."""

import warnings

from .. import _C
from ..autograd.function import Function

__all__ = ["RemovableHandle", "BackwardHook"]

_Tensor = _C.Tensor


def __getattr__(name):
    if name == "RemovableHandle":
        from ..nn.modules.module import RemovableHandle
        return RemovableHandle
    raise AttributeError(name)


class _HookIdentity(Function):
    """Returns its tensor arguments unchanged; backward hands the gradients
    to the BackwardHook (`which` says inputs or outputs)."""

    @staticmethod
    def forward(ctx, hook, which, *args):
        ctx.set_materialize_grads(False)
        ctx.hook = hook
        ctx.which = which
        ctx.mark_non_differentiable(*[a for a in args
                                      if isinstance(a, _Tensor)
                                      and not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        if ctx.which == "outputs":
            grads = ctx.hook._on_grad_outputs(grads)
        else:
            grads = ctx.hook._on_grad_inputs(grads)
        return (None, None) + tuple(grads)


class BackwardHook:
    """One module call's backward hooks."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.inputs_wrapped = False

    def _wrap(self, values, which):
        idx = [i for i, v in enumerate(values)
               if isinstance(v, _Tensor)]
        if not any(values[i].requires_grad for i in idx):
            return values, False
        out = _HookIdentity.apply(self, which, *[values[i] for i in idx])
        values = list(values)
        for i, o in zip(idx, out):
            values[i] = o
        return values, True

    def setup_input_hook(self, args):
        if not _C.is_grad_enabled():
            return args
        self.n_inputs = len(args)
        self.input_index = [i for i, a in enumerate(args)
                            if isinstance(a, _Tensor)]
        new, wrapped = self._wrap(list(args), "inputs")
        self.inputs_wrapped = wrapped
        return tuple(new)

    def setup_output_hook(self, result):
        if not _C.is_grad_enabled():
            return result
        single = isinstance(result, _Tensor)
        if not single and not isinstance(result, (tuple, list)):
            return result
        values = [result] if single else list(result)
        self.n_outputs = len(values)
        self.output_index = [i for i, v in enumerate(values)
                             if isinstance(v, _Tensor)]
        new, wrapped = self._wrap(values, "outputs")
        if not wrapped:
            return result
        if single:
            return new[0]
        return type(result)(new) if isinstance(result, tuple) else new

    def _pack(self, grads, index, n):
        full = [None] * n
        for i, g in zip(index, grads):
            full[i] = g
        return tuple(full)

    def _on_grad_outputs(self, grads):
        grad_outputs = self._pack(grads, self.output_index, self.n_outputs)
        for hook in self.user_pre_hooks:
            res = hook(self.module, grad_outputs)
            if res is None:
                continue
            if not isinstance(res, tuple):
                res = (res,)
            if len(res) != len(grad_outputs):
                raise RuntimeError(
                    "Backward pre hook returned an invalid number of grad_"
                    f"output, got {len(res)}, but expected "
                    f"{len(grad_outputs)}")
            grad_outputs = res
        self.grad_outputs = grad_outputs
        if not self.inputs_wrapped:
            if self.user_hooks:
                warnings.warn(
                    "Full backward hook is firing when gradients are "
                    "computed with respect to module outputs since no inputs "
                    "require gradients. See https://docs.pytorch.org/docs/"
                    "main/generated/torch.nn.Module.html#torch.nn.Module."
                    "register_full_backward_hook for more details.",
                    stacklevel=5)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (
                        isinstance(res, tuple)
                        and all(el is None for el in res)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires "
                        "gradient should always return None or None for all "
                        "gradients.")
            self.grad_outputs = None
        return tuple(grad_outputs[i] for i in self.output_index)

    def _on_grad_inputs(self, grads):
        grad_inputs = self._pack(grads, self.input_index, self.n_inputs)
        grad_outputs = self.grad_outputs
        if grad_outputs is None:
            grad_outputs = (None,) * getattr(self, "n_outputs", 0)
        for hook in self.user_hooks:
            res = hook(self.module, grad_inputs, grad_outputs)
            if res is None:
                continue
            if not isinstance(res, tuple):
                res = (res,)
            if len(res) != len(grad_inputs):
                raise RuntimeError(
                    "Backward hook returned an invalid number of grad_input, "
                    f"got {len(res)}, but expected {len(grad_inputs)}")
            grad_inputs = res
        self.grad_outputs = None
        return tuple(grad_inputs[i] for i in self.input_index)
