"""fastt.autograd.functional: torch's higher-order API (vjp, jvp,
jacobian, hessian, vhp, hvp) over reverse-mode autograd. jvp and hvp use
the double-backward trick (torch's without forward AD): the gradient of a
vjp with respect to its cotangent is the jvp."""

from .. import _C

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(x, arg_name, fn_name):
    is_tuple = isinstance(x, tuple)
    if not is_tuple:
        x = (x,)
    for i, el in enumerate(x):
        if not isinstance(el, _C.Tensor):
            if is_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a "
                    f"Tensor or a tuple of Tensors but the value at index {i} "
                    f"has type {type(el)}.")
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor "
                f"or a tuple of Tensors but the given {arg_name} has type "
                f"{type(el)}.")
    return is_tuple, x


def _tuple_postprocess(res, to_unpack):
    # to_unpack: one bool, or two for nested results (jacobian, hessian).
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _prepare(inputs, create_graph):
    # Fresh tensors that require grad; with create_graph they stay linked to
    # the caller's graph (torch's view_as).
    out = []
    for x in inputs:
        if create_graph and x.requires_grad:
            out.append(x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(x.is_floating_point()))
    return tuple(out)


def _grad(outputs, inputs, grad_outputs=None, create_graph=False,
          retain_graph=None):
    from . import grad
    outs, gos = [], []
    for k, o in enumerate(outputs):
        if o is not None and o.requires_grad:
            outs.append(o)
            gos.append(None if grad_outputs is None else grad_outputs[k])
    if not outs:
        return (None,) * len(inputs)
    diff = [i for i, x in enumerate(inputs) if x.requires_grad]
    res = [None] * len(inputs)
    if not diff:
        return tuple(res)
    got = grad(outs, [inputs[i] for i in diff],
               None if grad_outputs is None else gos,
               retain_graph=retain_graph, create_graph=create_graph,
               allow_unused=True)
    for i, g in zip(diff, got):
        res[i] = g
    return tuple(res)


def _fill_none(grads, refs, strict, create_graph, what):
    res = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"The {what} for the user-provided function is "
                    f"independent of input {i}. This is not allowed in "
                    "strict mode.")
            g = _C.zeros_like(r)
        elif not create_graph:
            g = g.detach()
        res.append(g)
    return tuple(res)


def _validate_v(v, other, is_other_tuple, what="v"):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"{what} is a tuple of invalid length: should be "
                f"{len(other)} but got {len(v)}.")
        raise RuntimeError(f"The given {what} should contain a single Tensor.")
    for idx, (el_v, el_o) in enumerate(zip(v, other)):
        if tuple(el_v.shape) != tuple(el_o.shape):
            prepend = ""
            if is_other_tuple:
                prepend = f"Entry {idx} in "
            raise RuntimeError(
                f"{prepend}v has invalid size: should be "
                f"{tuple(el_o.shape)} but got {tuple(el_v.shape)}.")


def _outputs(func, inputs, fn_name, strict=False):
    from . import enable_grad
    with enable_grad():
        out = func(*inputs)
    is_tuple, out = _as_tuple(
        out, "outputs of the user-provided function", fn_name)
    if strict:
        for i, o in enumerate(out):
            if not o.requires_grad:
                raise RuntimeError(
                    f"Output {i} of the user-provided function does not "
                    "require gradients. The outputs must be computed in a "
                    "differentiable manner from the input when running in "
                    "strict mode.")
    return is_tuple, out


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    from . import enable_grad
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        is_outputs_tuple, outputs = _outputs(func, inputs, "vjp", strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            _validate_v(v, outputs, is_outputs_tuple)
        else:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the user-provided "
                    "function returns a single Tensor with a single element.")
        grads = _grad(outputs, inputs, v, create_graph=create_graph,
                      retain_graph=create_graph)
        vjp_ = _fill_none(grads, inputs, strict, create_graph, "output")
    outputs = tuple(o if create_graph else o.detach() for o in outputs)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(vjp_, is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product at inputs, through
    the double-backward trick."""
    from . import enable_grad
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            _validate_v(v, inputs, is_inputs_tuple)
        else:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the "
                    "user-provided function is a single Tensor with a single "
                    "element.")
        is_outputs_tuple, outputs = _outputs(func, inputs, "jvp", strict)
        # u = J^T w for a dummy w; d(u . v)/dw = J v.
        grad_outputs = tuple(_C.zeros_like(o).requires_grad_(True)
                             for o in outputs)
        grad_inputs = _grad(outputs, inputs, grad_outputs, create_graph=True,
                            retain_graph=True)
        _fill_none(grad_inputs, inputs, strict, True, "output")
        if v is None:
            v = tuple(_C.ones_like(x) for x in inputs)
        pairs = [(g, vv) for g, vv in zip(grad_inputs, v) if g is not None]
        if pairs:
            jv = _grad([p[0] for p in pairs], grad_outputs,
                       [p[1] for p in pairs], create_graph=create_graph,
                       retain_graph=create_graph)
        else:
            jv = (None,) * len(outputs)
        jvp_ = []
        for i, (g, o) in enumerate(zip(jv, outputs)):
            if g is None:
                if strict:
                    raise RuntimeError(
                        "The jvp for the user-provided function is "
                        f"independent of input {i}. This is not allowed in "
                        "strict mode.")
                g = _C.zeros_like(o)
            elif not create_graph:
                g = g.detach()
            jvp_.append(g)
    outputs = tuple(o if create_graph else o.detach() for o in outputs)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(tuple(jvp_), is_outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at inputs: for output i and input j a tensor of
    shape output_i.shape + input_j.shape (nested tuples as torch's)."""
    from . import enable_grad
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(
            'Expected strategy to be either "forward-mode" or '
            f'"reverse-mode". Hint: If your function has more outputs than '
            f'inputs, "forward-mode" tends to be more performant. Otherwise, '
            f'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `strategy=\"forward-mode"
                "\"` does not support `create_graph=True`")
        if not vectorize:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `strategy=\"forward-mode"
                "\"` requires `vectorize=True`")
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        is_outputs_tuple, outputs = _outputs(func, inputs, "jacobian",
                                               strict)
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.numel()):
                if out.requires_grad:
                    g = _C.zeros_like(flat)
                    g[j] = 1.0
                    gi = _grad([flat], inputs, [g],
                               create_graph=create_graph, retain_graph=True)
                else:
                    gi = (None,) * len(inputs)
                for k, (gk, x) in enumerate(zip(gi, inputs)):
                    if gk is None:
                        if strict:
                            raise RuntimeError(
                                "Output {} of the user-provided function is "
                                "independent of input {}. This is not "
                                "allowed in strict mode.".format(i, k))
                        gk = _C.zeros_like(x)
                    elif not create_graph:
                        gk = gk.detach()
                    rows[k].append(gk)
            per_input = []
            for k, x in enumerate(inputs):
                shape = tuple(out.shape) + tuple(x.shape)
                if rows[k]:
                    per_input.append(_C.stack(rows[k]).view(shape))
                else:
                    per_input.append(_C.zeros(shape, dtype=x.dtype,
                                              device=x.device))
            jac.append(tuple(per_input))
    return _tuple_postprocess(tuple(jac), (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar func at inputs (nested tuples for several
    inputs, as torch's)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def ensure_single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(
            out, "outputs of the user-provided function", "hessian")
        if is_out_tuple or not isinstance(out, _C.Tensor):
            raise RuntimeError(
                "The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should "
                "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output, inp, create_graph=True)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph,
                   strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_first_grads(func, inputs, fn_name, strict):
    is_outputs_tuple, outputs = _outputs(func, inputs, fn_name, strict)
    if is_outputs_tuple or not isinstance(outputs[0], _C.Tensor):
        raise RuntimeError(
            f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should "
            "contain a single element")
    jac = _grad(outputs, inputs, create_graph=True, retain_graph=True)
    _fill_none(jac, inputs, strict, True, "jacobian")
    return outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar func."""
    from . import enable_grad
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph)
        if v is not None:
            _, v = _as_tuple(v, "v", "vhp")
            _validate_v(v, inputs, is_inputs_tuple)
        else:
            if len(inputs) != 1 or inputs[0].nelement() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the "
                    "user-provided function is a single Tensor with a single "
                    "element.")
            v = tuple(_C.ones_like(x) for x in inputs)
        outputs, jac = _scalar_first_grads(func, inputs, "vhp", strict)
        pairs = [(j, vv) for j, vv in zip(jac, v) if j is not None
                 and j.requires_grad]
        if pairs:
            res = _grad([p[0] for p in pairs], inputs, [p[1] for p in pairs],
                        create_graph=create_graph, retain_graph=create_graph)
        else:
            res = (None,) * len(inputs)
        res = _fill_none(res, inputs, strict, create_graph, "hessian")
    out = outputs[0] if create_graph else outputs[0].detach()
    return out, _tuple_postprocess(res, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar func, through the double-backward
    trick (H need not be symmetric in floating point)."""
    from . import enable_grad
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare(inputs, create_graph)
        if v is not None:
            _, v = _as_tuple(v, "v", "hvp")
            _validate_v(v, inputs, is_inputs_tuple)
        else:
            if len(inputs) != 1 or inputs[0].nelement() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the "
                    "user-provided function is a single Tensor with a single "
                    "element.")
            v = tuple(_C.ones_like(x) for x in inputs)
        outputs, jac = _scalar_first_grads(func, inputs, "hvp", strict)
        grad_jac = tuple(_C.zeros_like(x).requires_grad_(True)
                         for x in inputs)
        jpairs = [(j, g) for j, g in zip(jac, grad_jac)
                  if j is not None and j.requires_grad]
        if jpairs:
            double_back = _grad([p[0] for p in jpairs], inputs,
                                [p[1] for p in jpairs], create_graph=True,
                                retain_graph=True)
        else:
            double_back = (None,) * len(inputs)
        _fill_none(double_back, inputs, strict, True, "hessian")
        pairs = [(d, vv) for d, vv in zip(double_back, v) if d is not None]
        if pairs:
            res = _grad([p[0] for p in pairs], grad_jac,
                        [p[1] for p in pairs], create_graph=create_graph,
                        retain_graph=create_graph)
        else:
            res = (None,) * len(inputs)
        res = _fill_none(res, inputs, strict, create_graph, "hessian")
    out = outputs[0] if create_graph else outputs[0].detach()
    return out, _tuple_postprocess(res, is_inputs_tuple)
