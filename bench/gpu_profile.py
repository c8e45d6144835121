"""Where a bench/curves.py model's GPU step spends its time, op by op, in
fastt and in torch, for the device check (bench/gpu_check.sh, stage
`profile`). fastt: its profiler with CUDA_LAUNCH_BLOCKING=1 (set before
CUDA starts, so each kernel's host-side time is its device time);
torch: torch.profiler's CUDA kernel times. Prints the top ops of each.

    CUDA_LAUNCH_BLOCKING=1 python -m bench.gpu_profile [--model transformer]
        [--batch 64] [--mode train|infer] [--rows 12]
"""
import argparse
import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import curves  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="transformer", choices=curves.MODELS)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--mode", default="train", choices=("train", "infer"))
    p.add_argument("--rows", type=int, default=12)
    args = p.parse_args()
    if os.environ.get("CUDA_LAUNCH_BLOCKING") != "1":
        print("note: without CUDA_LAUNCH_BLOCKING=1, fastt's kernel column "
              "is enqueue time, not device time")
    make = curves.train_step if args.mode == "train" else curves.infer_step
    import fastt
    step = make(fastt, args.model, args.batch, device="cuda")
    for _ in range(3):
        step()
    fastt.cuda.synchronize()
    with fastt.profiler.profile() as prof:
        for _ in range(5):
            step()
        fastt.cuda.synchronize()
    print(f"== fastt {args.model} {args.mode} batch {args.batch}, 5 steps")
    print(prof.key_averages().table(sort_by="kernel_time",
                                    row_limit=args.rows))
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available():
        return
    tstep = make(torch, args.model, args.batch, device="cuda")
    for _ in range(3):
        tstep()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU,
            torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as tprof:
        for _ in range(5):
            tstep()
        torch.cuda.synchronize()
    print(f"== torch {args.model} {args.mode} batch {args.batch}, 5 steps")
    print(tprof.key_averages().table(sort_by="cuda_time_total",
                                     row_limit=args.rows))


if __name__ == "__main__":
    main()
