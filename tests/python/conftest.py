# pytest setup for the Python tests: import the installed fastt (pip install
# . / -e .), or the in-place build in python/fastt when nothing is installed.
import os
import sys

try:
    import fastt  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "python"))
    import fastt  # noqa: F401
