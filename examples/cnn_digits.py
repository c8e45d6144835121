"""Small CNN on scikit-learn's bundled digits as 1x8x8 images; the same code
runs on fastt or torch (--lib). Target: >= 98% test accuracy.
  python examples/cnn_digits.py --lib fastt --epochs 15"""

import time

import common


def build(nn, dropout):
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),                      # 32 x 4 x 4
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 128), nn.ReLU(),
        nn.Dropout(dropout),
        nn.Linear(128, 10),
    )


def main():
    p = common.base_parser(__doc__.splitlines()[0], epochs=15, batch_size=64,
                           lr=2e-3)
    p.add_argument("--dropout", type=float, default=0.25,
                   help="0 makes the two libraries' curves comparable")
    args = p.parse_args()
    lib, data = common.load_lib(args.lib, args.threads)
    nn, optim = lib.nn, lib.optim

    xtr, ytr, xte, yte = common.load_digits_split()
    xtr, xte = xtr.reshape(-1, 1, 8, 8), xte.reshape(-1, 1, 8, 8)
    train = data.TensorDataset(lib.tensor(xtr), lib.tensor(ytr))
    loader = data.DataLoader(train, batch_size=args.batch_size,
                             sampler=common.NumpySampler(len(xtr), args.seed))
    dev = args.device
    x_test, y_test = lib.tensor(xte).to(dev), lib.tensor(yte).to(dev)

    model = build(nn, args.dropout)
    common.init_params(model, lib, args.seed)
    model.to(dev)
    opt = optim.Adam(model.parameters(), lr=args.lr)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    print(f"{args.lib}: CNN {common.param_count(model)} params, "
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
        sched.step()
        losses += ep_losses
        acc = accuracy()
        mean_loss = sum(ep_losses) / len(ep_losses)
        step = timer.mean(last=len(ep_losses))
        epochs.append({"epoch": epoch, "train_loss": mean_loss,
                       "test_acc": acc, "step_ms": step})
        print(f"epoch {epoch:3d}  train loss {mean_loss:.4f}  "
              f"test acc {acc * 100:6.2f}%  step {step:.3f} ms", flush=True)
    total = time.perf_counter() - t0
    acc = epochs[-1]["test_acc"]
    common.summary("cnn_digits", args, total, timer, test_acc=acc,
                   final_loss=epochs[-1]["train_loss"])
    common.write_json(args, {
        "example": "cnn_digits", "lib": args.lib, "seed": args.seed,
        "threads": args.threads, "step_losses": losses, "epochs": epochs,
        "step_ms": timer.ms, "mean_step_ms": timer.mean(),
        "median_step_ms": timer.median(),
        "test_acc": acc, "total_s": total})


if __name__ == "__main__":
    main()
