# pytest setup for the Python tests: import the installed fastt (pip install
# . / -e .), or the in-place build in python/fastt when nothing is installed.
# Then the suite's policy, so that a green run means what it says:
#   - every skip is counted per reason and the counts are printed at the end;
#   - under CI=true a skip whose reason is not on SKIP_ALLOWLIST fails (a
#     missing torch, a failed import, a stale probe must not pass quietly);
#   - every xfail names its reason and the exception it expects (raises=);
#     pyproject.toml makes them strict, so a fixed bug fails as XPASS;
#   - under CI=true hypothesis runs the "ci" profile: a fixed example
#     sequence, so a red run reproduces.
import collections
import os
import re
import sys

import pytest

try:
    import fastt  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "python"))
    import fastt  # noqa: F401

CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# The skips CI may see: (regex on the reason, why it is legitimate there).
# Everything else is a failure under CI=true. Keep this list short.
SKIP_ALLOWLIST = [
    (r"^no CUDA GPU",
     "CI has no GPU; the CUDA suite runs on the emulator instead "
     "(scripts/cuda_emu_test.sh), and bench/gpu_check.sh runs it on a GPU"),
    (r"needs two devices|device_count\(\) < 2|needs two CUDA devices",
     "the emulator and CI's machine have one device at most"),
    (r"a CUDA GPU is present",
     "CPU-only behaviour of fastt.cuda, checked where no GPU exists"),
    (r"^no NCCL library",
     "a GPU machine without the optional nvidia-nccl-cu13 wheel; CI's "
     "emulator runs those tests against its one-rank NCCL stand-in"),
]

try:
    import hypothesis
except ImportError:
    if CI:
        raise  # hypothesis is required in CI (scripts/install_deps.sh)
else:
    hypothesis.settings.register_profile(
        "ci", derandomize=True, database=None, deadline=None,
        print_blob=True)
    if CI:
        hypothesis.settings.load_profile("ci")

_SKIPS = collections.Counter()
_UNLISTED = collections.Counter()


@pytest.fixture(scope="module")
def capture_poison():
    """fastt.compile's memory plan fills the memory it frees with 0xff
    bytes and keeps it: an argument the plan failed to move reads garbage
    and fails a comparison, instead of reading freed memory that still
    holds the right values (tests/python/test_compile*.py)."""
    fastt._C._capture_poison(True)
    yield
    fastt._C._capture_poison(False)


def _skip_reason(report):
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr)
    return reason[len("Skipped: "):] if reason.startswith("Skipped: ") \
        else reason


def _allowed(reason):
    return any(re.search(pat, reason) for pat, _ in SKIP_ALLOWLIST)


def _police_skip(report):
    """Counts a skip; under CI turns an unlisted one into a failure."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    _SKIPS[reason] += 1
    if CI and not _allowed(reason):
        _UNLISTED[reason] += 1
        report.outcome = "failed"
        report.longrepr = (
            f"skipped for a reason not on tests/python/conftest.py's "
            f"SKIP_ALLOWLIST under CI=true: {reason!r}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _police_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # A module-level importorskip/skip lands here: the whole file vanishes.
    outcome = yield
    _police_skip(outcome.get_result())


def pytest_collection_modifyitems(config, items):
    """Every xfail names its reason and the exception it expects: a bare
    xfail accepts any error, so a new crash would pass as 'expected'."""
    bad = []
    for item in items:
        for mark in item.iter_markers("xfail"):
            if not mark.kwargs.get("reason") or "raises" not in mark.kwargs:
                bad.append(item.nodeid)
            if mark.kwargs.get("strict") is False:
                bad.append(item.nodeid + " (strict=False)")
    if bad:
        raise pytest.UsageError(
            "xfail marks need reason= and raises= (and may not be "
            "strict=False):\n  " + "\n  ".join(sorted(set(bad))))


def pytest_terminal_summary(terminalreporter):
    if not _SKIPS:
        terminalreporter.write_line("skips: none")
        return
    terminalreporter.section("skips per reason")
    for reason, n in _SKIPS.most_common():
        tag = "UNLISTED " if reason in _UNLISTED else ""
        terminalreporter.write_line(f"{n:6d}  {tag}{reason}")
    if _UNLISTED:
        terminalreporter.write_line(
            f"{sum(_UNLISTED.values())} skips failed under CI=true: their "
            f"reasons are not on SKIP_ALLOWLIST (tests/python/conftest.py)")
