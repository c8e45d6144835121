"""fastt.utils.data._utils: the DataLoader's machinery (torch's
torch.utils.data._utils): collate (batching), fetch (samples of one task),
shm (batches through shared memory), worker (the worker process loop,
get_worker_info) and ExceptionWrapper (a worker's exception carried to the
main process)."""

import sys
import traceback

IS_WINDOWS = sys.platform == "win32"

# How often (seconds) a waiting worker checks that its main process is alive
# and how long shutdown waits for a worker before terminating it.
MP_STATUS_CHECK_INTERVAL = 5.0


class KeyErrorMessage(str):
    """A KeyError message that prints as is (KeyError repr()s its arg)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception and its formatted traceback, picklable, re-raised in
    another process as torch does: "Caught ValueError in DataLoader worker
    process 0.\\nOriginal Traceback ..." with the same type when it can be
    built from a message, else RuntimeError."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_name = exc_info[0].__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = (f"Caught {self.exc_name} {self.where}.\n"
               f"Original {self.exc_msg}")
        if self.exc_type is None:  # its class could not cross processes
            raise RuntimeError(msg)
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


from . import collate, fetch, shm, worker  # noqa: E402,F401
