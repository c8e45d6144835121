"""Sequence-to-sequence GRU that spells numbers in English words
("4071" -> "four thousand seventy one"); the same code runs on fastt or
torch (--lib). A GRU encoder reads the digits (packed, variable length),
its last state starts a GRU decoder trained with teacher forcing and
cross-entropy that ignores the padding; greedy decoding on held-out numbers
gives the token and exact-match accuracy.
  python examples/seq2seq_gru.py --lib fastt --steps 1500

The data are every number below 10**max_digits (a fixed sample of 100000
of them from 6 digits on), written without leading zeros, split train/test by a fixed numpy permutation; batches are drawn by
a numpy generator, so both libraries see the same batches and, starting
from the same weights, follow the same loss curve."""

import time

import numpy as np

import common

ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven",
        "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen",
        "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy",
        "eighty", "ninety"]
SCALES = ["", "thousand", "million"]
PAD, BOS, EOS = 0, 1, 2
TGT_WORDS = ["<pad>", "<s>", "</s>"] + ONES + TENS[2:] + ["hundred"] + \
    SCALES[1:]
SRC_CHARS = ["<pad>"] + list("0123456789")
MAX_NUMBERS = 100_000


def below_1000(n):
    words = []
    if n >= 100:
        words += [ONES[n // 100], "hundred"]
        n %= 100
    if n >= 20:
        words.append(TENS[n // 10])
        n %= 10
        if n:
            words.append(ONES[n])
    elif n:
        words.append(ONES[n])
    return words


def spell(n):
    """English words of 0 <= n < 10**9, without "and"."""
    if n == 0:
        return ["zero"]
    words, group = [], 0
    while n:
        n, part = divmod(n, 1000)
        if part:
            words = below_1000(part) + ([SCALES[group]] if group else []) + \
                words
        group += 1
    return words


def make_dataset(max_digits, test_frac, seed=0):
    """Padded arrays: src [N, S] digit ids, src_len [N], tgt [N, T + 1]
    = <s> words </s> (decoder input is tgt[:, :-1], target tgt[:, 1:])."""
    rng = np.random.default_rng([seed, 7])
    if 10 ** max_digits <= MAX_NUMBERS:
        numbers = np.arange(10 ** max_digits)
    else:  # a fixed sample of distinct numbers
        numbers = np.sort(rng.choice(10 ** max_digits, MAX_NUMBERS,
                                     replace=False))
    w2i = {w: i for i, w in enumerate(TGT_WORDS)}
    srcs = [[1 + int(c) for c in str(n)] for n in numbers]
    tgts = [[BOS] + [w2i[w] for w in spell(int(n))] + [EOS] for n in numbers]
    S, T = max(map(len, srcs)), max(map(len, tgts))
    src = np.full((len(numbers), S), PAD, np.int64)
    tgt = np.full((len(numbers), T), PAD, np.int64)
    for i, (s, t) in enumerate(zip(srcs, tgts)):
        src[i, :len(s)] = s
        tgt[i, :len(t)] = t
    src_len = np.array([len(s) for s in srcs], np.int64)
    perm = rng.permutation(len(numbers))
    n_test = int(round(len(numbers) * test_frac))
    test, train = perm[:n_test], perm[n_test:]
    return ((src[train], src_len[train], tgt[train]),
            (src[test], src_len[test], tgt[test]))


def build_model(lib, emb, hidden, layers):
    nn, F = lib.nn, lib.nn.functional
    pack = lib.nn.utils.rnn.pack_padded_sequence

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_emb = nn.Embedding(len(SRC_CHARS), emb, padding_idx=PAD)
            self.tgt_emb = nn.Embedding(len(TGT_WORDS), emb, padding_idx=PAD)
            self.encoder = nn.GRU(emb, hidden, num_layers=layers,
                                  batch_first=True)
            self.decoder = nn.GRU(emb, hidden, num_layers=layers,
                                  batch_first=True)
            self.out = nn.Linear(hidden, len(TGT_WORDS))

        def encode(self, src, src_len):
            packed = pack(self.src_emb(src), src_len, batch_first=True,
                          enforce_sorted=False)
            _, h = self.encoder(packed)  # state after each last digit
            return h

        def decode(self, tokens, h):
            out, h = self.decoder(self.tgt_emb(tokens), h)
            return self.out(out), h

        def forward(self, src, src_len, tgt_in, tgt_out):
            """Teacher-forced cross-entropy over the non-pad targets."""
            logits, _ = self.decode(tgt_in, self.encode(src, src_len))
            return F.cross_entropy(logits.reshape(-1, len(TGT_WORDS)),
                                   tgt_out.reshape(-1), ignore_index=PAD)

        def greedy(self, src, src_len, max_len):
            h = self.encode(src, src_len)
            tok = lib.full((src.shape[0], 1), BOS, dtype=lib.int64,
                           device=src.device)
            outs = []
            for _ in range(max_len):
                logits, h = self.decode(tok, h)
                tok = logits.argmax(dim=-1)
                outs.append(tok)
            return lib.cat(outs, dim=1)

    return Seq2Seq()


def main():
    p = common.base_parser(__doc__.splitlines()[0], epochs=1, batch_size=64,
                           lr=3e-3)
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--max-digits", type=int, default=4,
                   choices=range(1, 10), metavar="1..9",
                   help="numbers below 10**max_digits")
    p.add_argument("--test-frac", type=float, default=0.2)
    p.add_argument("--emb", type=int, default=32)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--log-every", type=int, default=100)
    args = p.parse_args()
    lib, _ = common.load_lib(args.lib, args.threads)
    nn, optim = lib.nn, lib.optim
    dev = args.device

    (src_tr, len_tr, tgt_tr), (src_te, len_te, tgt_te) = make_dataset(
        args.max_digits, args.test_frac)
    model = build_model(lib, args.emb, args.hidden, args.layers)
    common.init_params(model, lib, args.seed)
    model.to(dev)
    opt = optim.Adam(model.parameters(), lr=args.lr)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)
    print(f"{args.lib}: seq2seq GRU {common.param_count(model)} params, "
          f"{len(src_tr)} train / {len(src_te)} test numbers below "
          f"10^{args.max_digits}, {len(TGT_WORDS)} target words")

    def tensors(src, slen, tgt):
        """Batch cut to its longest source and target (lengths stay on the
        CPU, as pack_padded_sequence wants)."""
        S, T = int(slen.max()), int((tgt != PAD).sum(1).max())
        src, tgt = src[:, :S], tgt[:, :T]
        return (lib.from_numpy(np.ascontiguousarray(src)).to(dev),
                lib.from_numpy(slen.copy()),
                lib.from_numpy(np.ascontiguousarray(tgt[:, :-1])).to(dev),
                lib.from_numpy(np.ascontiguousarray(tgt[:, 1:])).to(dev))

    def evaluate():
        """Greedy decoding of the test numbers: token accuracy over the
        reference positions (words and </s>) and exact-match rate."""
        model.eval()
        src, slen, _, ref = tensors(src_te, len_te, tgt_te)
        with lib.no_grad():
            pred = model.greedy(src, slen, ref.shape[1]).cpu().numpy()
        model.train()
        ref = ref.cpu().numpy()
        mask = ref != PAD
        correct = (pred == ref) & mask
        token_acc = correct.sum() / mask.sum()
        exact = (correct | ~mask).all(axis=1).mean()
        return float(token_acc), float(exact), pred

    rng = np.random.default_rng([args.seed, 2])
    timer, losses, curve, window = common.StepTimer(), [], [], []
    bar = common.Progress(args.steps, "train", common.progress_enabled(args))
    params = list(model.parameters())
    t0 = time.perf_counter()
    for step in range(args.steps):
        idx = rng.integers(0, len(src_tr), args.batch_size)
        src, slen, tgt_in, tgt_out = tensors(src_tr[idx], len_tr[idx],
                                             tgt_tr[idx])
        timer.start()
        opt.zero_grad()
        loss = model(src, slen, tgt_in, tgt_out)
        loss.backward()
        nn.utils.clip_grad_norm_(params, args.clip)
        opt.step()
        value = loss.item()
        timer.stop()
        sched.step()
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
    token_acc, exact, pred = evaluate()
    print(f"test: token accuracy {token_acc * 100:.2f}%  exact match "
          f"{exact * 100:.2f}% ({len(src_te)} held-out numbers, greedy)")
    for i in range(5):
        digits = "".join(SRC_CHARS[c] for c in src_te[i, :len_te[i]])
        words = []
        for t in pred[i]:
            if t == EOS:
                break
            words.append(TGT_WORDS[t])
        print(f"  {digits:>{args.max_digits}} -> {' '.join(words)}")
    total = time.perf_counter() - t0
    common.summary("seq2seq_gru", args, total, timer, token_acc=token_acc,
                   exact_match=exact, final_loss=curve[-1]["train_loss"],
                   first_loss=losses[0], train_s=train_s)
    common.write_json(args, {
        "example": "seq2seq_gru", "lib": args.lib, "seed": args.seed,
        "threads": args.threads, "step_losses": losses, "curve": curve,
        "step_ms": timer.ms, "mean_step_ms": timer.mean(),
        "median_step_ms": timer.median(), "token_acc": token_acc,
        "exact_match": exact, "total_s": total, "train_s": train_s})


if __name__ == "__main__":
    main()
