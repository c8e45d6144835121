"""The suite's own policy (tests/python/conftest.py, pyproject.toml) can
fail: each case runs a tiny test file under a copy of the real conftest in a
subprocess and checks the outcome pytest reports."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def run(tmp_path, body, ci=True):
    """Runs body as a test file under the real conftest and pytest ini
    options; returns (exit code, output)."""
    (tmp_path / "conftest.py").write_text((HERE / "conftest.py").read_text())
    (tmp_path / "pytest.ini").write_text("[pytest]\nxfail_strict = true\n")
    (tmp_path / "test_sample.py").write_text(textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT / "python")] + sys.path), CI="true" if ci else "")
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=300)
    return p.returncode, p.stdout + p.stderr


def test_the_real_pyproject_is_strict():
    text = (ROOT / "pyproject.toml").read_text()
    assert "xfail_strict = true" in text


def test_unlisted_skip_fails_under_ci(tmp_path):
    rc, out = run(tmp_path, """
        import pytest
        def test_a():
            pytest.skip("some optional thing missing")
        """)
    assert rc == 1, out
    assert "not on tests/python/conftest.py's SKIP_ALLOWLIST" in out
    assert "1 failed" in out
    assert "UNLISTED some optional thing missing" in out


def test_unlisted_skip_is_only_counted_outside_ci(tmp_path):
    rc, out = run(tmp_path, """
        import pytest
        @pytest.mark.skipif(True, reason="some optional thing missing")
        def test_a():
            pass
        """, ci=False)
    assert rc == 0, out
    assert "1 skipped" in out and "some optional thing missing" in out


def test_allowlisted_skip_passes_under_ci(tmp_path):
    rc, out = run(tmp_path, """
        import pytest
        @pytest.mark.skipif(True, reason="no CUDA GPU")
        def test_a():
            pass
        """)
    assert rc == 0, out
    assert "1 skipped" in out


def test_module_level_importorskip_fails_under_ci(tmp_path):
    rc, out = run(tmp_path, """
        import pytest
        pytest.importorskip("a_package_that_does_not_exist_here")
        def test_a():
            pass
        """)
    assert rc != 0, out
    assert "a_package_that_does_not_exist_here" in out


@pytest.mark.parametrize("mark", [
    'pytest.mark.xfail(reason="x")',
    'pytest.mark.xfail(raises=ValueError)',
    'pytest.mark.xfail(reason="x", raises=ValueError, strict=False)',
])
def test_incomplete_xfail_is_a_usage_error(tmp_path, mark):
    rc, out = run(tmp_path, f"""
        import pytest
        @{mark}
        def test_a():
            raise ValueError
        """, ci=False)
    assert rc == 4, out  # pytest's usage error
    assert "xfail marks need reason= and raises=" in out


def test_xpass_fails_and_the_wrong_exception_fails(tmp_path):
    rc, out = run(tmp_path, """
        import pytest
        @pytest.mark.xfail(reason="fixed now", raises=ValueError)
        def test_fixed():
            pass
        @pytest.mark.xfail(reason="the known bug", raises=ValueError)
        def test_other_error():
            raise KeyError
        @pytest.mark.xfail(reason="the known bug", raises=ValueError)
        def test_known():
            raise ValueError
        """, ci=False)
    assert rc == 1, out
    assert "2 failed" in out and "1 xfailed" in out, out
