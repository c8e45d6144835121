"""fastt.utils: Python-side helpers that mirror torch.utils (so far only
torch.utils.data). Add a submodule here and import it below."""

from . import data  # noqa: F401
