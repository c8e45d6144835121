"""torch's NumPy-style keyword aliases: axis= for dim=, keepdims= for
keepdim=, x2= for other= (the C bindings' argument parser and the composite
ops both take them), with torch's values and torch's error for a name
given twice."""
import pytest
import torch

import fastt

X = torch.arange(24.0).reshape(2, 3, 4)

CALLS = {
    "sum": lambda L, x: x.sum(axis=1, keepdims=True),
    "fsum": lambda L, x: L.sum(x, axis=(0, 2)),
    "mean": lambda L, x: x.mean(axis=-1),
    "amax": lambda L, x: L.amax(x, axis=0, keepdims=True),
    "max": lambda L, x: x.max(axis=2).values,
    "argmax": lambda L, x: x.argmax(axis=1),
    "std": lambda L, x: x.std(axis=0),
    "var": lambda L, x: x.var(axis=1, keepdims=True),
    "prod": lambda L, x: x.prod(axis=2),
    "any": lambda L, x: (x > 5).any(axis=1),
    "cumsum": lambda L, x: x.cumsum(axis=2),
    "softmax": lambda L, x: x.softmax(axis=1),
    "logsumexp": lambda L, x: x.logsumexp(axis=1),
    "cat": lambda L, x: L.cat([x, x], axis=1),
    "stack": lambda L, x: L.stack([x, x], axis=0),
    "squeeze": lambda L, x: x[:1].squeeze(axis=0),
    "unsqueeze": lambda L, x: x.unsqueeze(axis=1),
    "sort": lambda L, x: x.sort(axis=1, descending=True).values,
    "median": lambda L, x: x.median(axis=1).values,
    "nansum": lambda L, x: L.nansum(x, axis=2, keepdims=True),
    "quantile": lambda L, x: L.quantile(x, 0.25, axis=1),
    "x2": lambda L, x: L.maximum(x, x2=x.flip(0)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_alias_matches_torch(name):
    t = CALLS[name](torch, X)
    f = CALLS[name](fastt, fastt.from_dlpack(X.clone()))
    torch.testing.assert_close(torch.from_dlpack(f), t)


def test_alias_and_name_together_is_an_error():
    x = fastt.ones(2, 3)
    for call in (lambda: x.sum(1, axis=1), lambda: x.sum(dim=1, axis=1),
                 lambda: x.median(dim=0, axis=1)):
        with pytest.raises(TypeError):
            call()
    with pytest.raises(TypeError, match="unexpected keyword"):
        x.sum(axes=1)
