"""fastt.optim: torch.optim's optimizers and learning-rate schedulers over
fastt's fused multi-tensor steps (one C++ call per parameter group).
Add an optimizer as a module here exporting an Optimizer subclass."""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD",
           "lr_scheduler"]
