"""fastt.distributions: probability distributions with torch.distributions'
API (sample / rsample / log_prob / entropy / cdf / icdf / moments, batch
and event shapes, argument validation), constraints, transforms and
kl_divergence, written with fastt ops only."""
from . import constraints, transforms, utils
from .constraint_registry import biject_to, transform_to
from .constraints import Constraint
from .continuous import (Beta, Dirichlet, Exponential, Gamma, Laplace, Normal,
                         Uniform)
from .counts import Geometric, NegativeBinomial
from .discrete import (Bernoulli, Binomial, Categorical, Multinomial,
                       OneHotCategorical, OneHotCategoricalStraightThrough,
                       Poisson)
from .distribution import Distribution, ExponentialFamily
from .kl import kl_divergence, register_kl
from .lkj_cholesky import LKJCholesky
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli,
                      RelaxedBernoulli, RelaxedOneHotCategorical)
from .transformed_distribution import (Independent, LogNormal,
                                       MixtureSameFamily,
                                       TransformedDistribution)
from .transforms import (AbsTransform, AffineTransform, CatTransform,
                         ComposeTransform, CorrCholeskyTransform,
                         CumulativeDistributionTransform, ExpTransform,
                         IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform,
                         ReshapeTransform, SigmoidTransform,
                         SoftmaxTransform, SoftplusTransform, StackTransform,
                         StickBreakingTransform, TanhTransform, Transform,
                         identity_transform)
from .univariate import (Cauchy, Chi2, ContinuousBernoulli, FisherSnedecor,
                         GeneralizedPareto, Gumbel, HalfCauchy, HalfNormal,
                         InverseGamma, Kumaraswamy, LogisticNormal, Pareto,
                         StudentT, Weibull)
from .von_mises import VonMises
from .wishart import Wishart
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
    "Cauchy", "Chi2", "ContinuousBernoulli", "FisherSnedecor",
    "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
    "InverseGamma", "Kumaraswamy", "LogisticNormal", "NegativeBinomial",
    "LKJCholesky", "Pareto", "StudentT", "VonMises", "Weibull", "Wishart",
    "biject_to", "transform_to",
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "StackTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
    "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
    "SoftplusTransform", "StickBreakingTransform", "TanhTransform",
    "Transform", "identity_transform",
]
