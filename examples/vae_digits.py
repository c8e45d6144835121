"""Variational autoencoder on scikit-learn's 8x8 digits; the same code runs
on fastt or torch (--lib). Encoder MLP -> Normal(loc, softplus scale)
posterior, reparameterised latent, decoder MLP -> Bernoulli pixel logits,
KL to a Normal(0, 1) prior with distributions.kl_divergence; prints the
test ELBO (nats per image) with its reconstruction and KL parts.
  python examples/vae_digits.py --lib fastt --epochs 100

Noise (--noise): `numpy` (default) draws the reparameterisation noise eps
from one numpy stream and builds z = q.loc + q.scale * eps, so fastt and
torch see the same noise and their curves agree to float rounding; `lib`
uses q.rsample() (each library's own generator), so only the learned ELBO
is comparable, not the step-by-step curve.
Targets (--targets): `binary` (default) thresholds the intensities at 0.5
(a proper Bernoulli likelihood); `soft` keeps intensities in [0, 1] and
scores them with Bernoulli(logits, validate_args=False), i.e. the usual
binary cross-entropy on grey levels."""

import time

import numpy as np

import common


def digits_01(targets, seed=0, test_frac=0.2):
    """The same train/test split as common.load_digits_split, but with the
    pixel intensities (0..16) scaled to [0, 1] instead of standardized."""
    from sklearn.datasets import load_digits
    x = load_digits().data.astype(np.float64) / 16.0
    if targets == "binary":
        x = (x >= 0.5).astype(np.float64)
    perm = np.random.default_rng(seed).permutation(len(x))
    n_test = int(round(len(x) * test_frac))
    test, train = perm[:n_test], perm[n_test:]
    return x[train].astype(np.float32), x[test].astype(np.float32)


def build_model(lib, hidden, latent):
    nn, F = lib.nn, lib.nn.functional
    D = lib.distributions

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(),
                                     nn.Linear(hidden, 2 * latent))
            self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(),
                                     nn.Linear(hidden, 64))

        def posterior(self, x):
            loc, raw = self.enc(x).chunk(2, dim=-1)
            return D.Normal(loc, F.softplus(raw) + 1e-4)

        def forward(self, x, eps=None, validate=True):
            """(recon, kl): per-image -log p(x|z) and KL(q(z|x) || p(z)),
            one posterior sample each."""
            q = self.posterior(x)
            # z = loc + scale * eps with given noise, else q.rsample()
            z = q.rsample() if eps is None else q.loc + q.scale * eps
            px = D.Bernoulli(logits=self.dec(z), validate_args=validate)
            recon = -px.log_prob(x).sum(-1)
            prior = D.Normal(lib.zeros_like(q.loc), lib.ones_like(q.scale))
            kl = D.kl_divergence(q, prior).sum(-1)
            return recon, kl

    return VAE()


def main():
    p = common.base_parser(__doc__.splitlines()[0], epochs=100, batch_size=64,
                           lr=2e-3)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--latent", type=int, default=8)
    p.add_argument("--noise", choices=["numpy", "lib"], default="numpy",
                   help="numpy: shared eps, curves agree; lib: q.rsample()")
    p.add_argument("--targets", choices=["binary", "soft"], default="binary")
    args = p.parse_args()
    lib, data = common.load_lib(args.lib, args.threads)
    optim = lib.optim

    xtr, xte = digits_01(args.targets)
    train = data.TensorDataset(lib.tensor(xtr))
    loader = data.DataLoader(train, batch_size=args.batch_size,
                             sampler=common.NumpySampler(len(xtr), args.seed))
    dev = args.device
    x_test = lib.tensor(xte).to(dev)
    validate = args.targets == "binary"  # grey levels are not in {0, 1}

    model = build_model(lib, args.hidden, args.latent)
    common.init_params(model, lib, args.seed)
    model.to(dev)
    opt = optim.Adam(model.parameters(), lr=args.lr)
    print(f"{args.lib}: VAE {common.param_count(model)} params, latent "
          f"{args.latent}, {len(xtr)} train / {len(xte)} test, "
          f"{len(loader)} steps/epoch, noise {args.noise}, "
          f"targets {args.targets}")

    noise_rng = np.random.default_rng([args.seed, 2])

    def noise(n, rng):
        if args.noise == "lib":
            return None
        return lib.tensor(rng.standard_normal(
            (n, args.latent)).astype(np.float32)).to(dev)

    def evaluate():
        """Test ELBO per image with one posterior sample (the same numpy
        noise at every evaluation in numpy mode)."""
        model.eval()
        with lib.no_grad():
            eps = noise(len(xte), np.random.default_rng([args.seed, 5]))
            recon, kl = model(x_test, eps, validate)
            r, k = recon.mean().item(), kl.mean().item()
        model.train()
        return -(r + k), r, k

    timer, losses, epochs = common.StepTimer(), [], []
    t0 = time.perf_counter()
    show = common.progress_enabled(args)
    for epoch in range(1, args.epochs + 1):
        bar = common.Progress(len(loader), f"epoch {epoch}", show)
        ep_losses = []
        for (xb,) in loader:
            xb = xb.to(dev)
            eps = noise(len(xb), noise_rng)
            timer.start()
            opt.zero_grad()
            recon, kl = model(xb, eps, validate)
            loss = (recon + kl).mean()  # negative ELBO per image
            loss.backward()
            opt.step()
            value = loss.item()
            timer.stop()
            ep_losses.append(value)
            bar.update(post=f"-elbo {value:.3f}")
        bar.close()
        losses += ep_losses
        elbo, rec, kl = evaluate()
        mean_loss = sum(ep_losses) / len(ep_losses)
        step = timer.mean(last=len(ep_losses))
        epochs.append({"epoch": epoch, "train_loss": mean_loss,
                       "test_elbo": elbo, "test_recon": rec, "test_kl": kl,
                       "step_ms": step})
        print(f"epoch {epoch:3d}  train -elbo {mean_loss:.4f}  test elbo "
              f"{elbo:.4f} (recon {rec:.4f} kl {kl:.4f})  step {step:.3f} ms",
              flush=True)
    total = time.perf_counter() - t0
    last = epochs[-1]
    common.summary("vae_digits", args, total, timer,
                   test_elbo=last["test_elbo"], test_recon=last["test_recon"],
                   test_kl=last["test_kl"], final_loss=last["train_loss"],
                   first_loss=losses[0], noise=args.noise)
    common.write_json(args, {
        "example": "vae_digits", "lib": args.lib, "seed": args.seed,
        "threads": args.threads, "noise": args.noise,
        "targets": args.targets, "step_losses": losses, "epochs": epochs,
        "step_ms": timer.ms, "mean_step_ms": timer.mean(),
        "median_step_ms": timer.median(), "test_elbo": last["test_elbo"],
        "total_s": total})


if __name__ == "__main__":
    main()
