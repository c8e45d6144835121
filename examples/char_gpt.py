"""Character-level GPT trained on the Python standard library's own source
(shipped with every Python); the same code runs on fastt or torch (--lib).
Prints the loss curve, validation loss and a sample.
  python examples/char_gpt.py --lib fastt --steps 400"""

import math
import os
import time

import numpy as np

import common


def stdlib_text(max_bytes):
    """Sorted top-level *.py files of the stdlib, concatenated up to
    max_bytes (a fixed subset for a given Python version)."""
    root = os.path.dirname(os.__file__)
    parts, size = [], 0
    for name in sorted(os.listdir(root)):
        if not name.endswith(".py"):
            continue
        try:
            with open(os.path.join(root, name), encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        parts.append(f"# file: {name}\n{text}\n")
        size += len(parts[-1])
        if size >= max_bytes:
            break
    return "".join(parts)[:max_bytes]


def build_model(lib, vocab, d_model, n_layer, n_head, block, attn):
    nn, F = lib.nn, lib.nn.functional
    use_sdpa = attn == "sdpa" and hasattr(F, "scaled_dot_product_attention")

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.proj = nn.Linear(d_model, d_model)
            if not use_sdpa:
                self.register_buffer(
                    "mask", lib.tril(lib.ones(block, block)).bool(),
                    persistent=False)

        def forward(self, x):
            B, T, C = x.shape
            hd = C // n_head
            q, k, v = self.qkv(x).split(C, dim=2)
            q = q.reshape(B, T, n_head, hd).transpose(1, 2)
            k = k.reshape(B, T, n_head, hd).transpose(1, 2)
            v = v.reshape(B, T, n_head, hd).transpose(1, 2)
            if use_sdpa:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
                att = att.masked_fill(~self.mask[:T, :T], float("-inf"))
                y = F.softmax(att, dim=-1) @ v
            y = y.transpose(1, 2).reshape(B, T, C)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d_model)
            self.attn = CausalSelfAttention()
            self.ln2 = nn.LayerNorm(d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model),
                                     nn.GELU(),
                                     nn.Linear(4 * d_model, d_model))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d_model)
            self.pos = nn.Parameter(lib.zeros(1, block, d_model))
            self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab, bias=False)

        def forward(self, idx, targets=None):
            T = idx.shape[1]
            x = self.tok(idx) + self.pos[:, :T]
            for blk in self.blocks:
                x = blk(x)
            logits = self.head(self.ln_f(x))
            if targets is None:
                return logits, None
            loss = F.cross_entropy(logits.reshape(-1, vocab),
                                   targets.reshape(-1))
            return logits, loss

    return GPT(), use_sdpa


def gpt_init_rule(n_layer):
    """GPT-2 init: N(0, 0.02) weights and embeddings, zero biases, the
    residual projections scaled by 1/sqrt(2 n_layer)."""
    def rule(kind, qname, shape, rng, module):
        if qname == "pos" or kind == "Embedding":
            return rng.normal(0.0, 0.02, shape)
        if kind == "Linear":
            if qname.endswith(".bias"):
                return np.zeros(shape)
            std = 0.02
            if qname.endswith("attn.proj.weight") or qname.endswith(
                    "mlp.2.weight"):
                std /= math.sqrt(2 * n_layer)
            return rng.normal(0.0, std, shape)
        return None
    return rule


def main():
    p = common.base_parser(__doc__.splitlines()[0], epochs=1, batch_size=16,
                           lr=3e-3)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--block", type=int, default=64)
    p.add_argument("--warmup", type=int, default=40)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--eval-batches", type=int, default=20)
    p.add_argument("--text-bytes", type=int, default=1_500_000)
    p.add_argument("--sample-chars", type=int, default=300)
    p.add_argument("--attn", choices=["sdpa", "manual"], default="sdpa",
                   help="F.scaled_dot_product_attention or a masked "
                        "softmax written out")
    args = p.parse_args()
    lib, _ = common.load_lib(args.lib, args.threads)
    nn, optim = lib.nn, lib.optim

    text = stdlib_text(args.text_bytes)
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.int64)
    n_val = len(ids) // 10
    train_ids, val_ids = ids[:-n_val], ids[-n_val:]

    model, used_sdpa = build_model(lib, len(chars), args.d_model,
                                   args.layers, args.heads, args.block,
                                   args.attn)
    common.init_params(model, lib, args.seed, gpt_init_rule(args.layers))
    model.to(args.device)
    # weight decay only on matrices (not biases, LayerNorm or positions)
    decay = [p_ for n, p_ in model.named_parameters()
             if p_.dim() >= 2 and n != "pos"]
    no_decay = [p_ for n, p_ in model.named_parameters()
                if not (p_.dim() >= 2 and n != "pos")]
    opt = optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                       {"params": no_decay, "weight_decay": 0.0}],
                      lr=args.lr, betas=(0.9, 0.95))

    def lr_factor(step):  # linear warmup, cosine to 10%
        if step < args.warmup:
            return (step + 1) / args.warmup
        t = (step - args.warmup) / max(1, args.steps - args.warmup)
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * min(t, 1.0)))

    sched = optim.lr_scheduler.LambdaLR(opt, lr_factor)
    print(f"{args.lib}: GPT {common.param_count(model)} params, vocab "
          f"{len(chars)}, {len(text) / 1e6:.2f} MB of stdlib source "
          f"({len(train_ids)} train / {len(val_ids)} val chars), attention "
          f"{'sdpa' if used_sdpa else 'manual'}")

    rng = np.random.default_rng([args.seed, 2])
    B, T = args.batch_size, args.block

    def batch(source, r):
        starts = r.integers(0, len(source) - T - 1, B)
        x = np.stack([source[s:s + T] for s in starts])
        y = np.stack([source[s + 1:s + T + 1] for s in starts])
        return (lib.from_numpy(x).to(args.device),
                lib.from_numpy(y).to(args.device))

    def val_loss():
        r = np.random.default_rng(1234)  # the same val batches every time
        model.eval()
        total = 0.0
        with lib.no_grad():
            for _ in range(args.eval_batches):
                x, y = batch(val_ids, r)
                total += model(x, y)[1].item()
        model.train()
        return total / args.eval_batches

    timer, losses, curve = common.StepTimer(), [], []
    show = common.progress_enabled(args)
    bar = common.Progress(args.steps, "train", show)
    params = list(model.parameters())

    def train_step(x, y):
        opt.zero_grad()
        _, loss = model(x, y)
        loss.backward()
        nn.utils.clip_grad_norm_(params, args.clip)
        opt.step()
        sched.step()
        return loss

    if args.compile:  # fastt: captured once, replayed after
        train_step = lib.compile(train_step)
    t0 = time.perf_counter()
    window = []
    for step in range(args.steps):
        x, y = batch(train_ids, rng)
        timer.start()
        loss = train_step(x, y)
        value = loss.item()
        timer.stop()
        losses.append(value)
        window.append(value)
        bar.update(post=f"loss {value:.3f}")
        if (step + 1) % args.log_every == 0 or step + 1 == args.steps:
            bar.close()
            mean = sum(window) / len(window)
            curve.append({"step": step + 1, "train_loss": mean,
                          "lr": opt.param_groups[0]["lr"],
                          "step_ms": timer.mean(last=len(window))})
            print(f"step {step + 1:5d}  loss {mean:.4f}  "
                  f"lr {opt.param_groups[0]['lr']:.2e}  "
                  f"{timer.mean(last=len(window)):.2f} ms/step", flush=True)
            window = []
    bar.close()
    train_s = time.perf_counter() - t0
    if args.compile and hasattr(train_step, "stats"):
        print(f"compiled step: {train_step.stats}")
    vloss = val_loss()
    print(f"validation loss {vloss:.4f} (perplexity {math.exp(vloss):.2f})")

    # sampling: the model gives probabilities, numpy draws (same in both)
    model.eval()
    srng = np.random.default_rng([args.seed, 3])
    context = [stoi[c] for c in "def " if c in stoi]
    with lib.no_grad():
        for _ in range(args.sample_chars):
            idx = lib.tensor([context[-T:]]).to(args.device)
            logits, _ = model(idx)
            probs = lib.nn.functional.softmax(logits[0, -1] / 0.8, dim=-1)
            pr = probs.double().cpu().numpy()
            context.append(int(srng.choice(len(pr), p=pr / pr.sum())))
    sample = "".join(chars[i] for i in context)
    print("---- sample ----")
    print(sample)
    print("----------------")
    total = time.perf_counter() - t0
    common.summary("char_gpt", args, total, timer, val_loss=vloss,
                   final_loss=curve[-1]["train_loss"], train_s=train_s)
    common.write_json(args, {
        "example": "char_gpt", "lib": args.lib, "seed": args.seed,
        "threads": args.threads, "step_losses": losses, "curve": curve,
        "step_ms": timer.ms, "mean_step_ms": timer.mean(),
        "median_step_ms": timer.median(), "val_loss": vloss,
        "total_s": total, "train_s": train_s, "sample": sample})


if __name__ == "__main__":
    main()
