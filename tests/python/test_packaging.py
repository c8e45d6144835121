"""pip install . ships every subpackage: pyproject.toml lists them all."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))


def test_pyproject_lists_every_subpackage():
    text = open(os.path.join(ROOT, "pyproject.toml")).read()
    listed = set(re.findall(r'"(fastt[\w.]*)"', text.split("packages =")[1]
                            .split("]")[0]))
    found = set()
    base = os.path.join(ROOT, "python")
    for dirpath, _, files in os.walk(os.path.join(base, "fastt")):
        if "__init__.py" in files and "__pycache__" not in dirpath:
            found.add(os.path.relpath(dirpath, base).replace(os.sep, "."))
    assert found == listed
