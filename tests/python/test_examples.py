"""The training examples reach their targets with fastt, and fastt's loss
curve follows torch's when both start from the same weights and batches."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
EXAMPLES = os.path.join(ROOT, "examples")

pytest.importorskip("sklearn")


def run(script, *args):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, script), "--progress", "off",
         *args], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("SUMMARY")]
    assert line, out.stdout[-2000:]
    return dict(kv.split("=", 1) for kv in line[-1].split()[1:]), out.stdout


def test_mlp_digits_reaches_97_percent():
    summary, _ = run("mlp_digits.py", "--lib", "fastt")
    assert float(summary["test_acc"]) >= 0.97


def test_cnn_digits_reaches_98_percent():
    summary, _ = run("cnn_digits.py", "--lib", "fastt")
    assert float(summary["test_acc"]) >= 0.98


def test_char_gpt_learns_and_matches_torch():
    pytest.importorskip("torch")
    args = ("--steps", "40", "--eval-batches", "2", "--sample-chars", "20",
            "--text-bytes", "300000")
    ours, out = run("char_gpt.py", "--lib", "fastt", *args)
    theirs, _ = run("char_gpt.py", "--lib", "torch", *args)
    losses = [float(x) for x in re.findall(r"loss (\d+\.\d+)", out)]
    assert losses[-1] < losses[0] - 0.5  # it learns
    # Same initial weights and batches: the curves agree closely.
    assert abs(float(ours["val_loss"]) - float(theirs["val_loss"])) < 1e-3


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_char_rnn_learns_and_matches_torch(cell):
    pytest.importorskip("torch")
    args = ("--steps", "40", "--cell", cell, "--eval-batches", "2",
            "--sample-chars", "20", "--text-bytes", "200000", "--hidden",
            "64", "--block", "32")
    ours, out = run("char_lstm.py", "--lib", "fastt", *args)
    theirs, _ = run("char_lstm.py", "--lib", "torch", *args)
    losses = [float(x) for x in re.findall(r"loss (\d+\.\d+)", out)]
    assert losses[-1] < losses[0] - 0.3  # it learns
    # Same initial weights and batches: the curves agree closely.
    assert abs(float(ours["val_loss"]) - float(theirs["val_loss"])) < 1e-3
