"""Helpers for the tests that compare fastt with torch tensor by tensor
(the nn and linalg modules' tests): a torch tensor as a fastt one, and an
assertion that a fastt result equals torch's."""
import fastt
import torch


def Fz(t, grad=False):
    """torch tensor t as a fastt tensor (a copy), a grad leaf if grad."""
    f = fastt.from_dlpack(t.detach().clone())
    return f.requires_grad_(True) if grad else f


def close(f, t, tol=1e-9):
    """fastt tensor f equals torch tensor t to rtol = atol = tol."""
    torch.testing.assert_close(torch.from_dlpack(f.detach()), t.detach(),
                               rtol=tol, atol=tol)
