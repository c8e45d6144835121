"""MLP (64-128-128-10, ReLU) on scikit-learn's bundled 8x8 digits; the same
code runs on fastt or torch (--lib). Target: >= 97% test accuracy.
  python examples/mlp_digits.py --lib fastt --epochs 20"""

import time

import common


def build(nn):
    return nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(),
        nn.Linear(128, 128), nn.ReLU(),
        nn.Linear(128, 10),
    )


def main():
    p = common.base_parser(__doc__.splitlines()[0], epochs=20, batch_size=64,
                           lr=1e-3)
    p.add_argument("--optim", choices=["adam", "sgd"], default="adam")
    args = p.parse_args()
    lib, data = common.load_lib(args.lib, args.threads)
    nn, optim = lib.nn, lib.optim

    xtr, ytr, xte, yte = common.load_digits_split()
    train = data.TensorDataset(lib.tensor(xtr), lib.tensor(ytr))
    loader = data.DataLoader(train, batch_size=args.batch_size,
                             sampler=common.NumpySampler(len(xtr), args.seed))
    dev = args.device
    x_test, y_test = lib.tensor(xte).to(dev), lib.tensor(yte).to(dev)

    model = build(nn)
    common.init_params(model, lib, args.seed)
    model.to(dev)
    if args.optim == "adam":
        opt = optim.Adam(model.parameters(), lr=args.lr)
    else:
        opt = optim.SGD(model.parameters(), lr=args.lr * 50, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    print(f"{args.lib}: MLP {common.param_count(model)} params, "
          f"{len(xtr)} train / {len(xte)} test, {len(loader)} steps/epoch")

    def accuracy():
        model.eval()
        with lib.no_grad():
            pred = model(x_test).argmax(dim=1)
            acc = (pred == y_test).sum().item() / len(yte)
        model.train()
        return acc

    def train_step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    if args.compile:  # captured once per batch shape, replayed after
        train_step = lib.compile(train_step)
    timer, losses, epochs = common.StepTimer(), [], []
    t0 = time.perf_counter()
    show = common.progress_enabled(args)
    for epoch in range(1, args.epochs + 1):
        bar = common.Progress(len(loader), f"epoch {epoch}", show)
        ep_losses = []
        for xb, yb in loader:
            xb, yb = xb.to(dev), yb.to(dev)
            timer.start()
            loss = train_step(xb, yb)
            value = loss.item()
            timer.stop()
            ep_losses.append(value)
            bar.update(post=f"loss {value:.4f}")
        bar.close()
        losses += ep_losses
        acc = accuracy()
        mean_loss = sum(ep_losses) / len(ep_losses)
        epochs.append({"epoch": epoch, "train_loss": mean_loss,
                       "test_acc": acc,
                       "step_ms": timer.mean(last=len(ep_losses))})
        print(f"epoch {epoch:3d}  train loss {mean_loss:.4f}  "
              f"test acc {acc * 100:6.2f}%  "
              f"step {timer.mean(last=len(ep_losses)):.3f} ms", flush=True)
    total = time.perf_counter() - t0
    acc = epochs[-1]["test_acc"]
    common.summary("mlp_digits", args, total, timer, test_acc=acc,
                   final_loss=epochs[-1]["train_loss"])
    common.write_json(args, {
        "example": "mlp_digits", "lib": args.lib, "seed": args.seed,
        "threads": args.threads, "step_losses": losses, "epochs": epochs,
        "step_ms": timer.ms, "mean_step_ms": timer.mean(),
        "median_step_ms": timer.median(),
        "test_acc": acc, "total_s": total})


if __name__ == "__main__":
    main()
