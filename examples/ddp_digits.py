"""Data-parallel training of the digits MLP, written as a torch DDP script
(init_process_group from the environment, DistributedSampler, the DDP
wrapper, an all_reduce of the epoch's loss); the same code runs on fastt
or torch (--lib). Target: the single-process MLP's >= 97% test accuracy.
  python -m fastt.distributed.run --nproc-per-node 2 examples/ddp_digits.py
  torchrun --nproc-per-node 2 examples/ddp_digits.py --lib torch
--batch-size is the global batch: each rank takes its share."""

import time

import common

from mlp_digits import build


def main():
    p = common.base_parser(__doc__.splitlines()[0], epochs=20, batch_size=64,
                           lr=1e-3)
    args = p.parse_args()
    lib, data = common.load_lib(args.lib, args.threads)
    import importlib
    dist = importlib.import_module(args.lib + ".distributed")
    parallel = importlib.import_module(args.lib + ".nn.parallel")
    nn, optim = lib.nn, lib.optim

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} must divide by "
                         f"the world size {world}")

    xtr, ytr, xte, yte = common.load_digits_split()
    train = data.TensorDataset(lib.tensor(xtr), lib.tensor(ytr))
    sampler = data.distributed.DistributedSampler(train, seed=args.seed)
    loader = data.DataLoader(train, batch_size=args.batch_size // world,
                             sampler=sampler)
    x_test, y_test = lib.tensor(xte), lib.tensor(yte)

    model = build(nn)
    common.init_params(model, lib, args.seed + rank)  # DDP syncs rank 0's
    ddp = parallel.DistributedDataParallel(model)
    opt = optim.Adam(ddp.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    if rank == 0:
        print(f"{args.lib}: DDP MLP on {world} ranks, "
              f"{common.param_count(model)} params, {len(xtr)} train / "
              f"{len(xte)} test, {len(loader)} steps/epoch per rank")

    timer, epochs = common.StepTimer(), []
    t0 = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        total = lib.zeros(2, dtype=lib.float64)
        for xb, yb in loader:
            timer.start()
            opt.zero_grad()
            loss = loss_fn(ddp(xb), yb)
            loss.backward()
            opt.step()
            timer.stop()
            total += lib.tensor([loss.item() * len(yb), len(yb)],
                                dtype=lib.float64)
        dist.all_reduce(total)                       # the job's mean loss
        mean_loss = (total[0] / total[1]).item()
        epochs.append(mean_loss)
        if rank == 0:
            print(f"epoch {epoch:3d}  loss {mean_loss:.4f}", flush=True)

    model.eval()
    with lib.no_grad():
        acc = (model(x_test).argmax(dim=1) == y_test).float().mean().item()
    # Every rank holds the same parameters: check it, as a user would
    # (the largest difference from rank 0's, over all ranks).
    flat = lib.cat([q.detach().reshape(-1) for q in model.parameters()])
    ref = flat.clone()
    dist.broadcast(ref, src=0)
    diff = (flat - ref).abs().max().reshape(1)
    dist.all_reduce(diff, op=dist.ReduceOp.MAX)
    in_sync = bool(diff.item() == 0.0)
    if rank == 0:
        common.summary("ddp_digits", args, time.perf_counter() - t0, timer,
                       world=world, final_loss=epochs[-1], test_acc=acc,
                       in_sync=in_sync)
        common.write_json(args, {"losses": epochs, "test_acc": acc,
                                 "world": world, "in_sync": in_sync})
    dist.destroy_process_group()
    if not in_sync:
        raise SystemExit(f"rank {rank}: parameters diverged from rank 0's")


if __name__ == "__main__":
    main()
