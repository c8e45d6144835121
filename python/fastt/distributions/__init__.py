"""fastt.distributions: probability distributions with torch.distributions'
API (sample / rsample / log_prob / entropy / cdf / icdf / moments, batch
and event shapes, argument validation), constraints, transforms and
kl_divergence, written with fastt ops only."""
from . import constraints, transforms, utils
from .constraints import Constraint
from .continuous import (Beta, Dirichlet, Exponential, Gamma, Laplace, Normal,
                         Uniform)
from .discrete import (Bernoulli, Binomial, Categorical, Multinomial,
                       OneHotCategorical, OneHotCategoricalStraightThrough,
                       Poisson)
from .distribution import Distribution, ExponentialFamily
from .kl import kl_divergence, register_kl
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli,
                      RelaxedBernoulli, RelaxedOneHotCategorical)
from .transformed_distribution import (Independent, LogNormal,
                                       MixtureSameFamily,
                                       TransformedDistribution)
from .transforms import (AbsTransform, AffineTransform, ComposeTransform,
                         CumulativeDistributionTransform, ExpTransform,
                         IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform,
                         ReshapeTransform, SigmoidTransform,
                         SoftmaxTransform, SoftplusTransform,
                         StickBreakingTransform, TanhTransform, Transform,
                         identity_transform)
from . import kl  # noqa: F401  (fastt.distributions.kl.kl_divergence)

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Constraint", "Dirichlet",
    "Distribution", "ExpRelaxedCategorical", "Exponential",
    "ExponentialFamily", "Gamma", "Independent", "Laplace",
    "LogitRelaxedBernoulli", "LogNormal", "LowRankMultivariateNormal",
    "MixtureSameFamily", "Multinomial", "MultivariateNormal", "Normal",
    "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson",
    "RelaxedBernoulli", "RelaxedOneHotCategorical", "TransformedDistribution",
    "Uniform", "constraints", "kl_divergence", "register_kl", "transforms",
    "utils",
    "AbsTransform", "AffineTransform", "ComposeTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
    "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
    "SoftplusTransform", "StickBreakingTransform", "TanhTransform",
    "Transform", "identity_transform",
]
