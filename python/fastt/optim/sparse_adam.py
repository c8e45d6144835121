"""SparseAdam (torch.optim.SparseAdam): torch's constructor and validation.
fastt has no sparse tensors (nn.Embedding(sparse=True) produces a dense
gradient), so every gradient a step can see is dense, and torch's
SparseAdam rejects dense gradients: step() raises torch's error for them
(use Adam)."""

import fastt

from .optimizer import Optimizer, _enable_grad, _host_call

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 maximize=False):
        if isinstance(lr, fastt.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps,
                    "maximize": maximize}
        super().__init__(params, defaults)
        complex_params = []
        for index, group in enumerate(self.param_groups):
            for d_index, p in enumerate(group["params"]):
                if p.is_complex():
                    complex_params.append([index, d_index])
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does "
                "not support complex parameters")

    @_host_call
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with _enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    # fastt has no sparse gradients: every one is dense
                    raise RuntimeError(
                        "SparseAdam does not support dense gradients, please "
                        "consider Adam instead")
        return loss
