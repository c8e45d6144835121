"""The type stubs (python/fastt/__init__.pyi) list every public function
and Tensor method the extension exposes, so editors complete them all."""
import ast
import os

import fastt


def _stub_names():
    path = os.path.join(os.path.dirname(fastt.__file__), "__init__.pyi")
    tree = ast.parse(open(path).read())
    top, methods = set(), set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.ImportFrom):  # re-exports: `as` names
            top.update(a.asname or a.name for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target]
            top.update(t.id for t in targets if isinstance(t, ast.Name))
        if isinstance(node, ast.ClassDef) and node.name == "Tensor":
            for m in node.body:
                if isinstance(m, ast.FunctionDef):
                    methods.add(m.name)
                elif isinstance(m, (ast.Assign, ast.AnnAssign)):
                    targets = m.targets if isinstance(m, ast.Assign) else \
                        [m.target]
                    methods.update(t.id for t in targets
                                   if isinstance(t, ast.Name))
    return top, methods


def test_stub_covers_module_functions():
    top, _ = _stub_names()
    public = {n for n in dir(fastt) if not n.startswith("_")}
    assert public - top == set()


def test_stub_covers_tensor_methods():
    _, methods = _stub_names()
    public = {n for n in dir(fastt.Tensor) if not n.startswith("_")}
    assert public - methods == set()


def test_stub_generated_lines_are_current():
    """The rows' stub lines are generated (scripts/gen_stubs.py, from the
    elementwise rows and the binder rows the built extension reports): a row
    added or changed without rerunning the script fails here, and so does a
    name both generated and written by hand."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    # The script reads the fastt these tests import.
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(fastt.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [pkg] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    r = subprocess.run([sys.executable,
                        os.path.join(root, "scripts", "gen_stubs.py"),
                        "--check"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
