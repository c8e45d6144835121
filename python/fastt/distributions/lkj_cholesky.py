"""LKJCholesky: the LKJ distribution over Cholesky factors of correlation
matrices (as torch.distributions.LKJCholesky), sampled by the onion
method (Ghosh & Henderson; Lewandowski, Kurowicka & Joe 2009)."""
import math

import fastt

from . import constraints
from .continuous import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJCholesky(dim, concentration): L with L L^T ~ LKJ(concentration),
    density proportional to prod_i L_ii^(dim - i + 2 (concentration - 1))."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or "
                             f"equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = fastt.Size((dim, dim))
        # the onion method: row i >= 1 has off-diagonal squared norm
        # y_i ~ Beta(i / 2, concentration + (dim - 2) / 2 - (i - 1) / 2)
        # (row 0's draw is unused). torch 2.13 uses i - 1/2 for the first
        # parameter, which is i / 2 only for i = 1: its samples for dim >= 3
        # do not follow its own log_prob (the correlations are not even
        # exchangeable); fastt samples the LKJ distribution log_prob gives.
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = fastt.arange(self.dim - 1, dtype=self.concentration.dtype,
                              device=self.concentration.device)
        offset = fastt.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = 0.5 * (offset + 1)
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = fastt.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=fastt.Size()):
        with fastt.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = fastt.randn(self._extended_shape(sample_shape),
                                   dtype=y.dtype, device=y.device).tril(-1)
            norm = u_normal.norm(dim=-1, keepdim=True)
            # row 0 is all zeros (0 / 0): it stays zero
            first = fastt.arange(self.dim, device=y.device).reshape(
                self.dim, 1) == 0
            u_hypersphere = fastt.where(
                first, fastt.zeros_like(u_normal),
                u_normal / fastt.where(first, fastt.ones_like(norm), norm))
            w = fastt.sqrt(y) * u_hypersphere
            eps = fastt.finfo(w.dtype).tiny
            diag_elems = fastt.clamp(1 - fastt.sum(w ** 2, dim=-1),
                                     min=eps).sqrt()
            return w + fastt.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = fastt.arange(2, self.dim + 1,
                             device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = fastt.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = fastt.lgamma(alpha) * dm1
        numerator = fastt.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
