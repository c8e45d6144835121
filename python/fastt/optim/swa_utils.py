"""torch.optim.swa_utils over fastt: AveragedModel (SWA / EMA averages of
a model's parameters, optionally its buffers), the avg_fn / multi_avg_fn
factories, update_bn (recomputes batch-norm statistics over a loader) and
the SWALR scheduler, with torch's arithmetic so averages match torch's."""

import itertools
import math
import warnings
from copy import deepcopy

import fastt
from fastt.nn import Module

from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _is_float(t):
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please "
                         "provide a value in [0,1] range.")

    def ema_update(ema_param_list, current_param_list, _):
        with fastt.no_grad():
            if _is_float(ema_param_list[0]):
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with fastt.no_grad():
            if _is_float(averaged_param_list[0]):
                weight = 1 / (num_averaged + 1)
                if isinstance(weight, fastt.Tensor):
                    weight = float(weight)  # torch: a Python scalar weight
                for p_avg, p_model in zip(averaged_param_list,
                                          current_param_list):
                    p_avg.lerp_(p_model, weight)
            else:
                for p_avg, p_model in zip(averaged_param_list,
                                          current_param_list):
                    diff = p_model - p_avg
                    if isinstance(num_averaged, fastt.Tensor):
                        p_avg.addcdiv_(diff, num_averaged + 1)
                    else:
                        p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please "
                         "provide a value in [0,1] range.")

    def ema_update(ema_param, current_param, num_averaged):
        with fastt.no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    def swa_update(averaged_param, current_param, num_averaged):
        with fastt.no_grad():
            return averaged_param + (current_param - averaged_param) / (
                num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError(
                "Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        n = fastt.tensor(0, dtype=fastt.long)
        if device is not None:
            n = n.to(device)
        self.register_buffer("n_averaged", n)
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        self_param = (
            itertools.chain(self.module.parameters(), self.module.buffers())
            if self.use_buffers else self.parameters())
        model_param = (
            itertools.chain(model.parameters(), model.buffers())
            if self.use_buffers else model.parameters())
        self_detached, model_detached = [], []
        copy_param = bool(self.n_averaged == 0)
        with fastt.no_grad():
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach().to(p_averaged.device)
                self_detached.append(p_averaged.detach())
                model_detached.append(p_model_)
                if copy_param:
                    p_averaged.detach().copy_(p_model_)
            if bool(self.n_averaged > 0):
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    # torch groups by (device, dtype) and calls once a group
                    groups = {}
                    for a, m in zip(self_detached, model_detached):
                        key = (str(a.device), a.dtype)
                        groups.setdefault(key, ([], []))
                        groups[key][0].append(a)
                        groups[key][1].append(m)
                    for (dev, _), (avgs, models) in groups.items():
                        n_averaged = self.n_averaged.to(dev)
                        if self.multi_avg_fn:
                            self.multi_avg_fn(avgs, models, n_averaged)
                        elif not dev.startswith("cpu"):
                            # torch's foreach devices: the lerp form
                            get_swa_multi_avg_fn()(avgs, models, n_averaged)
                        else:  # torch on CPU: the per-tensor form
                            avg_fn = get_swa_avg_fn()
                            for p_avg, p_model in zip(avgs, models):
                                p_avg.copy_(avg_fn(p_avg, p_model,
                                                   n_averaged))
                else:
                    for p_averaged, p_model in zip(self_detached,
                                                   model_detached):
                        n_averaged = self.n_averaged.to(p_averaged.device)
                        p_averaged.detach().copy_(
                            self.avg_fn(p_averaged.detach(), p_model,
                                        n_averaged))
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(),
                                          model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def _is_batchnorm(module):
    try:
        from fastt.nn.modules.batchnorm import _NormBase
    except ImportError:  # pragma: no cover
        return False
    return isinstance(module, _NormBase) and hasattr(
        module, "reset_running_stats")


def update_bn(loader, model, device=None):
    with fastt.no_grad():
        momenta = {}
        for module in model.modules():
            if _is_batchnorm(module):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for bn_module in momenta:
            bn_module.momentum = momenta[bn_module]
        model.train(was_training)


class SWALR(LRScheduler):
    def __init__(self, optimizer, swa_lr, anneal_epochs=10,
                 anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                "anneal_strategy must be one of 'cos' or 'linear', "
                f"instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError("anneal_epochs must be equal or greater than 0, "
                             f"got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the "
                          "scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"],
                                         prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items()
                if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
