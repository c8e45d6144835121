"""End to end "autograd and nn on CUDA": the examples' digits MLP and char
GPT trained for a few steps on the device and on CPU from the same initial
weights and batches; the loss curves and final weights must agree."""
import os
import sys

import numpy as np
import pytest

import fastt

from cuda_util import DEVICE, requires_device, to_numpy

pytestmark = requires_device

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples")
sys.path.insert(0, EXAMPLES)

import common  # noqa: E402  (examples/common.py)


def close_curves(dev, cpu, rtol, what):
    dev, cpu = np.asarray(dev), np.asarray(cpu)
    assert np.all(np.isfinite(dev)), f"{what}: device losses {dev}"
    np.testing.assert_allclose(dev, cpu, rtol=rtol, atol=rtol,
                               err_msg=f"{what}: loss curves differ")


def close_params(dev_model, cpu_model, rtol, what):
    for (name, d), (_, c) in zip(dev_model.named_parameters(),
                                 cpu_model.named_parameters(), strict=True):
        assert d.device.type == fastt.device(DEVICE).type, name
        np.testing.assert_allclose(to_numpy(d), to_numpy(c), rtol=rtol,
                                   atol=rtol, err_msg=f"{what}: {name}")


# ---------------------------------------------------------------- MLP

@pytest.mark.parametrize("opt_name", ["adam", "sgd"])
def test_mlp_digits_device_matches_cpu(opt_name):
    pytest.importorskip("sklearn")
    import mlp_digits
    nn, optim = fastt.nn, fastt.optim
    xtr, ytr, xte, yte = common.load_digits_split()
    epochs, batch, lr = 2, 64, 1e-3

    def train(device):
        fastt.manual_seed(0)
        model = mlp_digits.build(nn)
        common.init_params(model, fastt, 0)
        model.to(device)
        if opt_name == "adam":
            opt = optim.Adam(model.parameters(), lr=lr)
        else:
            opt = optim.SGD(model.parameters(), lr=lr * 50, momentum=0.9)
        loss_fn = nn.CrossEntropyLoss()
        sampler = common.NumpySampler(len(xtr), 0)
        losses = []
        for _ in range(epochs):
            order = np.array(list(iter(sampler)))
            for s in range(0, len(order), batch):
                idx = order[s:s + batch]
                xb = fastt.tensor(xtr[idx]).to(device)
                yb = fastt.tensor(ytr[idx]).to(device)
                opt.zero_grad()
                loss = loss_fn(model(xb), yb)
                loss.backward()
                opt.step()
                losses.append(loss.item())
        model.eval()
        with fastt.no_grad():
            logits = model(fastt.tensor(xte).to(device))
            pred = logits.argmax(dim=1).cpu().numpy()
        return model, losses, float((pred == yte).mean())

    cpu_model, cpu_losses, cpu_acc = train("cpu")
    dev_model, dev_losses, dev_acc = train(DEVICE)
    assert len(dev_losses) == 2 * 23
    assert dev_losses[-1] < dev_losses[0] - 0.5  # it learns
    close_curves(dev_losses, cpu_losses, 1e-3, f"mlp/{opt_name}")
    close_params(dev_model, cpu_model, 1e-3, f"mlp/{opt_name}")
    assert abs(dev_acc - cpu_acc) <= 2.0 / len(yte)


# ---------------------------------------------------------------- GPT

@pytest.mark.parametrize("attn", ["sdpa", "manual"])
def test_char_gpt_device_matches_cpu(attn):
    import char_gpt
    nn, optim = fastt.nn, fastt.optim
    text = char_gpt.stdlib_text(200_000)
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.int64)
    d_model, layers, heads, block, batch = 32, 2, 4, 32, 4
    steps, warmup = 8, 3

    def train(device):
        fastt.manual_seed(0)
        model, _ = char_gpt.build_model(fastt, len(chars), d_model, layers,
                                        heads, block, attn)
        common.init_params(model, fastt, 0, char_gpt.gpt_init_rule(layers))
        model.to(device)
        named = list(model.named_parameters())
        decay = [p for n, p in named if p.dim() >= 2 and n != "pos"]
        no_decay = [p for n, p in named if not (p.dim() >= 2 and n != "pos")]
        opt = optim.AdamW([{"params": decay, "weight_decay": 0.1},
                           {"params": no_decay, "weight_decay": 0.0}],
                          lr=3e-3, betas=(0.9, 0.95))
        sched = optim.lr_scheduler.LambdaLR(
            opt, lambda s: (s + 1) / warmup if s < warmup else 1.0)
        rng = np.random.default_rng([0, 2])
        params = [p for _, p in named]
        losses = []
        for _ in range(steps):
            starts = rng.integers(0, len(ids) - block - 1, batch)
            x = np.stack([ids[s:s + block] for s in starts])
            y = np.stack([ids[s + 1:s + block + 1] for s in starts])
            opt.zero_grad()
            _, loss = model(fastt.from_numpy(x).to(device),
                            fastt.from_numpy(y).to(device))
            loss.backward()
            nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            losses.append(loss.item())
        return model, losses

    cpu_model, cpu_losses = train("cpu")
    dev_model, dev_losses = train(DEVICE)
    assert dev_losses[-1] < dev_losses[0]  # it learns
    close_curves(dev_losses, cpu_losses, 2e-3, f"gpt/{attn}")
    close_params(dev_model, cpu_model, 2e-3, f"gpt/{attn}")
