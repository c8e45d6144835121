"""fastt's benchmark suite: how much time the library spends around a
kernel (the framework tax), measured beside NumPy, torch and libtorch.

    python -m bench                       # everything, < 10 min on 2 cores
    python -m bench --quick               # fewer sizes/repeats, < 1 min
    python -m bench --only ops,sweep,curves
    python -m bench --report-only         # redo report.md from the JSON

Parts: ops.py (per-op latency at five levels, C++ and Python), sweep.py
(1 ... 16M elements, 1 thread and all cores), curves.py (latency vs batch
size for MLP/CNN/transformer, inference and training; optimizer step).
Each writes bench/results/<part>.json; report.py turns them into
bench/results/report.md, headline.md and <part>.png. Shared timing lives
in common.py, the Google Benchmark runs in native.py. Older entry points
(bench_python.py, train_step.py, bench_nn.py) still run on their own."""
