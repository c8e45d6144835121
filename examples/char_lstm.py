"""Character-level LSTM language model on the Python standard library's own
source (the char_gpt example's text); the same code runs on fastt or torch
(--lib). Embedding -> multi-layer nn.LSTM -> Linear, trained with Adam and
gradient clipping on random windows; prints the loss curve, the
validation loss and a sample.
  python examples/char_lstm.py --lib fastt --steps 300"""

import math
import time

import numpy as np

import common
from char_gpt import stdlib_text


def build_model(lib, vocab, d_emb, hidden, layers, dropout, cell):
    nn, F = lib.nn, lib.nn.functional
    rnn_cls = {"lstm": nn.LSTM, "gru": nn.GRU}[cell]

    class CharRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d_emb)
            self.rnn = rnn_cls(d_emb, hidden, num_layers=layers,
                               dropout=dropout, batch_first=True)
            self.head = nn.Linear(hidden, vocab)

        def forward(self, idx, targets=None, state=None):
            out, state = self.rnn(self.emb(idx), state)
            logits = self.head(out)
            if targets is None:
                return logits, None, state
            loss = F.cross_entropy(logits.reshape(-1, vocab),
                                   targets.reshape(-1))
            return logits, loss, state

    return CharRNN()


def main():
    p = common.base_parser(__doc__.splitlines()[0], epochs=1, batch_size=32,
                           lr=3e-3)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--cell", choices=["lstm", "gru"], default="lstm")
    p.add_argument("--emb", type=int, default=32)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--block", type=int, default=64)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--eval-batches", type=int, default=20)
    p.add_argument("--text-bytes", type=int, default=1_500_000)
    p.add_argument("--sample-chars", type=int, default=300)
    args = p.parse_args()
    lib, _ = common.load_lib(args.lib, args.threads)
    nn, optim = lib.nn, lib.optim

    text = stdlib_text(args.text_bytes)
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.int64)
    n_val = len(ids) // 10
    train_ids, val_ids = ids[:-n_val], ids[-n_val:]

    model = build_model(lib, len(chars), args.emb, args.hidden, args.layers,
                        args.dropout, args.cell)
    common.init_params(model, lib, args.seed)
    model.to(args.device)
    opt = optim.Adam(model.parameters(), lr=args.lr)
    print(f"{args.lib}: char-{args.cell.upper()} "
          f"{common.param_count(model)} params, vocab {len(chars)}, "
          f"{len(text) / 1e6:.2f} MB of stdlib source")

    rng = np.random.default_rng([args.seed, 2])
    B, T = args.batch_size, args.block

    def batch(source, r):
        starts = r.integers(0, len(source) - T - 1, B)
        x = np.stack([source[s:s + T] for s in starts])
        y = np.stack([source[s + 1:s + T + 1] for s in starts])
        return (lib.from_numpy(x).to(args.device),
                lib.from_numpy(y).to(args.device))

    def val_loss():
        r = np.random.default_rng(1234)
        model.eval()
        total = 0.0
        with lib.no_grad():
            for _ in range(args.eval_batches):
                x, y = batch(val_ids, r)
                total += model(x, y)[1].item()
        model.train()
        return total / args.eval_batches

    timer, losses, curve, window = common.StepTimer(), [], [], []
    bar = common.Progress(args.steps, "train", common.progress_enabled(args))
    params = list(model.parameters())
    t0 = time.perf_counter()
    for step in range(args.steps):
        x, y = batch(train_ids, rng)
        timer.start()
        opt.zero_grad()
        _, loss, _ = model(x, y)
        loss.backward()
        nn.utils.clip_grad_norm_(params, args.clip)
        opt.step()
        value = loss.item()
        timer.stop()
        losses.append(value)
        window.append(value)
        bar.update(post=f"loss {value:.3f}")
        if (step + 1) % args.log_every == 0 or step + 1 == args.steps:
            bar.close()
            mean = sum(window) / len(window)
            curve.append({"step": step + 1, "train_loss": mean,
                          "step_ms": timer.mean(last=len(window))})
            print(f"step {step + 1:5d}  loss {mean:.4f}  "
                  f"{timer.mean(last=len(window)):.2f} ms/step", flush=True)
            window = []
    bar.close()
    train_s = time.perf_counter() - t0
    vloss = val_loss()
    print(f"validation loss {vloss:.4f} (perplexity {math.exp(vloss):.2f})")

    # sampling one character at a time, carrying the recurrent state
    model.eval()
    srng = np.random.default_rng([args.seed, 3])
    context = [stoi[c] for c in "def " if c in stoi]
    with lib.no_grad():
        logits, _, state = model(lib.tensor([context]).to(args.device))
        for _ in range(args.sample_chars):
            probs = lib.nn.functional.softmax(logits[0, -1] / 0.8, dim=-1)
            pr = probs.double().cpu().numpy()
            nxt = int(srng.choice(len(pr), p=pr / pr.sum()))
            context.append(nxt)
            logits, _, state = model(lib.tensor([[nxt]]).to(args.device),
                                     state=state)
    sample = "".join(chars[i] for i in context)
    print("---- sample ----")
    print(sample)
    print("----------------")
    total = time.perf_counter() - t0
    common.summary(f"char_{args.cell}", args, total, timer, val_loss=vloss,
                   final_loss=curve[-1]["train_loss"], train_s=train_s)
    common.write_json(args, {
        "example": f"char_{args.cell}", "lib": args.lib, "seed": args.seed,
        "threads": args.threads, "step_losses": losses, "curve": curve,
        "step_ms": timer.ms, "mean_step_ms": timer.mean(),
        "median_step_ms": timer.median(), "val_loss": vloss,
        "total_s": total, "train_s": train_s, "sample": sample})


if __name__ == "__main__":
    main()
