"""fastt.utils: Python-side helpers that mirror torch.utils
(torch.utils.data, torch.utils.checkpoint). Add a submodule here and import
it below."""

from . import checkpoint, data, hooks  # noqa: F401
