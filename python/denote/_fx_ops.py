"""The op handlers of the torch.fx capture (torch_capture.py): one per module type, function and
Tensor method. A handler gets the Context (builder, fx node, torch), the call's arguments with fx
nodes replaced by their values (``T`` for graph tensors, concrete Python/torch values otherwise)
and returns the ``T`` of the lowered result; ``Unsupported(why)`` refuses a configuration.

torch is never imported here: ``tables(torch)`` receives the module from the capture.
"""

import operator
from types import SimpleNamespace

from .torch_capture import T, Unsupported

def _bind(args, kwargs, names, defaults=None, ignore=()):
    """Positional and keyword arguments against `names` (the callee's parameter order)."""
    out = dict(defaults or {})
    if len(args) > len(names):
        raise Unsupported("{} positional arguments, expected at most {}".format(len(args), len(names)))
    out.update(zip(names, args))
    for k, v in kwargs.items():
        if k in ignore:
            continue
        if k not in names:
            raise Unsupported("keyword argument '{}'".format(k))
        out[k] = v
    for k in names:
        if k not in out:
            raise Unsupported("missing argument '{}'".format(k))
    return out


def _graph_tensor(v):
    if not isinstance(v, T):
        raise Unsupported("expected a graph tensor as the first operand")
    return v


def _axis(d, rank):
    d = int(d)
    if not -max(rank, 1) <= d < max(rank, 1):
        raise Unsupported("dim {} out of range for rank {}".format(d, rank))
    return d + rank if d < 0 else d


def _tuple(v, r, what):
    if isinstance(v, int):
        return [v] * r
    v = [int(e) for e in v]
    if len(v) == 1:
        return v * r
    if len(v) != r:
        raise Unsupported("{} {} for {} spatial axes".format(what, v, r))
    return v


def _in_dtype(ctx, i=0):
    a = ctx.node.args[i] if i < len(ctx.node.args) else None
    meta = getattr(a, "meta", {}).get("tensor_meta")
    return getattr(meta, "dtype", None)


# --- elementwise ----------------------------------------------------------------------------

def _unary(kind, names=("input",), defaults=None, ignore=("inplace",)):
    def h(ctx, args, kwargs):
        p = _bind(args, kwargs, list(names), defaults, ignore)
        x = _graph_tensor(p["input"])
        return ctx.b.add(kind, [x], x.shape)
    return h


def _emit_binary(ctx, kind, a, b):
    out = ctx.out_shape()
    return ctx.b.add(kind, [ctx.b.broadcast(a, out), ctx.b.broadcast(b, out)], out)


def _binary(kind, swap=False, alpha=False):
    names = ["input", "other"] + (["alpha"] if alpha else [])

    def h(ctx, args, kwargs):
        p = _bind(args, kwargs, names, {"alpha": 1})
        if p["alpha"] != 1:
            raise Unsupported("alpha={}".format(p["alpha"]))
        a, b = (p["other"], p["input"]) if swap else (p["input"], p["other"])
        return _emit_binary(ctx, kind, a, b)
    return h


def _div(swap=False):
    def h(ctx, args, kwargs):
        p = _bind(args, kwargs, ["input", "other", "rounding_mode"], {"rounding_mode": None})
        kind = {None: "div", "trunc": "div_trunc", "floor": "div_floor"}.get(p["rounding_mode"])
        if kind is None:
            raise Unsupported("rounding_mode={!r}".format(p["rounding_mode"]))
        a, b = (p["other"], p["input"]) if swap else (p["input"], p["other"])
        return _emit_binary(ctx, kind, a, b)
    return h


def _pow(swap=False):
    def h(ctx, args, kwargs):
        p = _bind(args, kwargs, ["input", "exponent"])
        base, e = (p["exponent"], p["input"]) if swap else (p["input"], p["exponent"])
        b = ctx.b
        if isinstance(base, T) and isinstance(e, (int, float)) and not isinstance(e, bool):
            # PyTorch's CPU kernel special-cases these exponents (pow_tensor_scalar_optimized).
            e = float(e)
            if e == 1.0:
                return base
            if e == 2.0:
                return b.add("mul_elem", [base, base], base.shape)
            if e == 3.0:
                sq = b.add("mul_elem", [base, base], base.shape)
                return b.add("mul_elem", [sq, base], base.shape)
            if e == 0.5:
                return b.add("sqrt", [base], base.shape)
            if e == -0.5:
                return b.add("rsqrt", [base], base.shape)
            if e == -1.0:
                return b.add("inv", [base], base.shape)
            if e == -2.0:
                sq = b.add("mul_elem", [base, base], base.shape)
                return b.add("inv", [sq], base.shape)
        return _emit_binary(ctx, "pow", base, e)
    return h


def _gelu_fn(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "approximate"], {"approximate": "none"})
    return _gelu(ctx, _graph_tensor(p["input"]), p["approximate"])


def _gelu(ctx, x, approximate):
    if approximate == "tanh":
        return _gelu_tanh(ctx, x)
    if approximate != "none":
        raise Unsupported("approximate={!r}: expected 'none' (erf) or 'tanh'".format(approximate))
    return ctx.b.add("gelu", [x], x.shape)


# --- activations lowered to the IR's ops, each in ATen's order of operations ----------------------

def _const(ctx, v, x):
    return ctx.b.broadcast(float(v), x.shape)


def _op(ctx, kind, *parents):
    return ctx.b.add(kind, list(parents), parents[0].shape)


def _gelu_tanh(ctx, x):
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as ATen's GeluKernel with approximate='tanh'."""
    beta = 1.41421356237309504880 * 1.12837916709551257390 * 0.5  # M_SQRT2 * M_2_SQRTPI * 0.5, in double
    cube = _op(ctx, "mul_elem", _op(ctx, "mul_elem", x, x), x)
    inner = _op(ctx, "add", x, _op(ctx, "mul_elem", _const(ctx, 0.044715, x), cube))
    inner = _op(ctx, "mul_elem", _const(ctx, beta, x), inner)
    half_x = _op(ctx, "mul_elem", _const(ctx, 0.5, x), x)
    return _op(ctx, "mul_elem", half_x, _op(ctx, "add", _const(ctx, 1.0, x), _op(ctx, "tanh", inner)))


def _silu(ctx, x):
    """x / (1 + exp(-x)), as ATen's silu kernel."""
    return _op(ctx, "div", x, _op(ctx, "add", _const(ctx, 1.0, x), _op(ctx, "exp", _op(ctx, "neg", x))))


def _leaky_relu(ctx, x, slope):
    """relu(x) - slope relu(-x): x where x > 0, else x * slope, each rounded once as ATen's (one of the
    two terms is zero)."""
    if isinstance(slope, bool) or not isinstance(slope, (int, float)):
        raise Unsupported("negative_slope {!r} (only a Python number)".format(slope))
    neg = _op(ctx, "relu", _op(ctx, "neg", x))
    return _op(ctx, "sub", _op(ctx, "relu", x), _op(ctx, "mul_elem", neg, _const(ctx, slope, x)))


def _elu(ctx, x, alpha):
    """relu(x) + alpha (exp(min(x, 0)) - 1): x where x > 0, else alpha (e^x - 1). ATen uses expm1 there:
    near 0 the two differ by about one unit of the output's scale."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise Unsupported("alpha {!r} (only a Python number)".format(alpha))
    low = _op(ctx, "neg", _op(ctx, "relu", _op(ctx, "neg", x)))  # min(x, 0)
    em1 = _op(ctx, "sub", _op(ctx, "exp", low), _const(ctx, 1.0, x))
    return _op(ctx, "add", _op(ctx, "relu", x), _op(ctx, "mul_elem", em1, _const(ctx, alpha, x)))


def _hardsigmoid(ctx, x):
    """clamp(x + 3, 0, 6) / 6, as ATen's."""
    t = _clamp(ctx, _op(ctx, "add", x, _const(ctx, 3.0, x)), 0.0, 6.0)
    return _op(ctx, "div", t, _const(ctx, 6.0, x))


def _hardswish(ctx, x):
    """x clamp(x + 3, 0, 6) / 6, as ATen's (the product first, then the division)."""
    t = _clamp(ctx, _op(ctx, "add", x, _const(ctx, 3.0, x)), 0.0, 6.0)
    return _op(ctx, "div", _op(ctx, "mul_elem", x, t), _const(ctx, 6.0, x))


def _activation_fn(lower, names, defaults):
    """A torch.nn.functional activation: its arguments bound, inplace ignored (the capture refuses
    in-place writes elsewhere)."""
    def h(ctx, args, kwargs):
        p = _bind(args, kwargs, ["input"] + names + ["inplace"], dict(defaults, inplace=False))
        return lower(ctx, _graph_tensor(p["input"]), *[p[n] for n in names])
    return h


def _softplus(ctx, x, beta, threshold):
    if beta != 1 or threshold != 20:
        raise Unsupported("beta={}, threshold={}: only beta=1, threshold=20".format(beta, threshold))
    return ctx.b.add("softplus", [x], x.shape)


def _softplus_fn(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "beta", "threshold"], {"beta": 1, "threshold": 20})
    return _softplus(ctx, _graph_tensor(p["input"]), p["beta"], p["threshold"])


def _clamp(ctx, x, lo, hi):
    """min(max(x, lo), hi) as PyTorch's clamp: clamp_min for the lower bound, min_elem for the upper."""
    for v in (lo, hi):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise Unsupported("a tensor bound (only Python numbers)")
    if lo is None and hi is None:
        raise Unsupported("neither min nor max")
    if lo is not None:
        x = ctx.b.add("clamp_min", [x], x.shape, bound=float(lo))
    if hi is not None:
        x = ctx.b.add("min_elem", [x, ctx.b.broadcast(float(hi), x.shape)], x.shape)
    return x


def _clamp_fn(names):
    def h(ctx, args, kwargs):
        p = _bind(args, kwargs, ["input"] + names, {n: None for n in names})
        return _clamp(ctx, _graph_tensor(p["input"]), p[names[0]], p[names[1]] if len(names) > 1 else None)
    return h


def _hardtanh(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "min_val", "max_val", "inplace"], {"min_val": -1.0, "max_val": 1.0,
                                                                         "inplace": False})
    return _clamp(ctx, _graph_tensor(p["input"]), p["min_val"], p["max_val"])


def _relu6(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "inplace"], {"inplace": False})
    return _clamp(ctx, _graph_tensor(p["input"]), 0.0, 6.0)


def _clamp_max(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "max"])
    return _clamp(ctx, _graph_tensor(p["input"]), None, p["max"])


def _softmax_like(kind):
    def h(ctx, args, kwargs):
        p = _bind(args, kwargs, ["input", "dim", "_stacklevel", "dtype"],
                  {"dim": None, "_stacklevel": 3, "dtype": None})
        return _softmax(ctx, kind, _graph_tensor(p["input"]), p["dim"], p["dtype"])
    return h


def _softmax(ctx, kind, x, dim, dtype=None):
    if dim is None:
        raise Unsupported("dim=None (the implicit legacy dimension); give dim explicitly")
    if dtype is not None:
        raise Unsupported("dtype={}".format(dtype))
    return ctx.b.add(kind, [x], x.shape, axis=_axis(dim, len(x.shape)))


# --- layout ---------------------------------------------------------------------------------

def _reshape_like(ctx, args, kwargs):
    x = _graph_tensor(args[0])
    for a in list(args[1:]) + list(kwargs.values()):
        if isinstance(a, ctx.torch.dtype):
            raise Unsupported("a dtype reinterpretation")
    return ctx.b.reshape(x, ctx.out_shape())


def _alias(ctx, args, kwargs):
    x = _graph_tensor(args[0])
    for k in kwargs:
        if k not in ("memory_format",):
            raise Unsupported("keyword argument '{}'".format(k))
    return x


def _same_dtype(ctx, args, kwargs):
    x = _graph_tensor(args[0])
    if _in_dtype(ctx) != ctx.out_dtype():
        raise Unsupported("a dtype conversion {} -> {}".format(_in_dtype(ctx), ctx.out_dtype()))
    return x


def _detach(ctx, args, kwargs):
    x = _graph_tensor(args[0])
    return ctx.b.add("detach", [x], x.shape)


def _permute(ctx, args, kwargs):
    x = _graph_tensor(args[0])
    dims = list(args[1:]) or [kwargs.get("dims")]
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = list(dims[0])
    perm = [_axis(d, len(x.shape)) for d in dims]
    if perm == list(range(len(x.shape))):
        return x
    return ctx.b.add("permute", [x], ctx.out_shape(), perm=perm)


def _transpose_axes(ctx, x, d0, d1):
    r = len(x.shape)
    a, b = _axis(d0, r), _axis(d1, r)
    if a == b:
        return x
    return ctx.b.add("transpose", [x], ctx.out_shape(), axis1=a, axis2=b)


def _transpose(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "dim0", "dim1"])
    return _transpose_axes(ctx, _graph_tensor(p["input"]), p["dim0"], p["dim1"])


def _t(ctx, args, kwargs):
    x = _graph_tensor(args[0])
    return x if len(x.shape) < 2 else _transpose_axes(ctx, x, 0, 1)


def _getattr(ctx, args, kwargs):
    x, attr = _graph_tensor(args[0]), args[1]
    r = len(x.shape)
    if attr == "T":
        if r < 2:
            return x
        return ctx.b.add("permute", [x], ctx.out_shape(), perm=list(range(r))[::-1])
    if attr == "mT" and r >= 2:
        return _transpose_axes(ctx, x, -2, -1)
    raise Unsupported("attribute '{}'".format(attr))


def _expand(ctx, args, kwargs):
    return ctx.b.broadcast(_graph_tensor(args[0]), ctx.out_shape())


def _cat(ctx, args, kwargs):
    p = _bind(args, kwargs, ["tensors", "dim"], {"dim": 0})
    ts = [ctx.b.tensor(t) for t in p["tensors"]]
    if len(ts) == 1:
        return ts[0]
    return ctx.b.add("concat", ts, ctx.out_shape(), axis=_axis(p["dim"], len(ts[0].shape)))


def _stack(ctx, args, kwargs):
    p = _bind(args, kwargs, ["tensors", "dim"], {"dim": 0})
    ts = [ctx.b.tensor(t) for t in p["tensors"]]
    d = _axis(p["dim"], len(ts[0].shape) + 1)
    parts = [ctx.b.reshape(t, t.shape[:d] + [1] + t.shape[d:]) for t in ts]
    if len(parts) == 1:
        return parts[0]
    return ctx.b.add("concat", parts, ctx.out_shape(), axis=d)


# --- reductions -----------------------------------------------------------------------------

def _reduce(ctx, kind, x, dim, keepdim, dtype):
    """reduce_sum/reduce_mean over any set of dims: the dims are made adjacent (permute when they
    are not), merged by one reshape and reduced once (one division for a mean, as PyTorch)."""
    if dtype is not None:
        raise Unsupported("dtype={}".format(dtype))
    b, shape, rank = ctx.b, x.shape, len(x.shape)
    if rank == 0:
        return x
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        dims = list(range(rank))
    else:
        dims = sorted({_axis(d, rank) for d in (dim if isinstance(dim, (tuple, list)) else [dim])})
    if any(shape[d] == 0 for d in dims):
        raise Unsupported("a reduction over an empty axis")
    out = ctx.out_shape()
    if kind == "reduce_sum" and len(dims) == rank:
        return b.reshape(b.add("sum", [x], []), out)
    if dims != list(range(dims[0], dims[-1] + 1)):
        kept = [a for a in range(rank) if a not in dims]
        perm = kept + dims
        x = b.add("permute", [x], [shape[a] for a in perm], perm=perm)
        shape, dims = x.shape, list(range(len(kept), rank))
    lo, hi = dims[0], dims[-1] + 1
    n = 1
    for d in dims:
        n *= shape[d]
    merged = b.reshape(x, shape[:lo] + [n] + shape[hi:])
    red = b.add(kind, [merged], shape[:lo] + shape[hi:], axis=lo)
    return b.reshape(red, out)


def _reduction(kind):
    def h(ctx, args, kwargs):
        p = _bind(args, kwargs, ["input", "dim", "keepdim", "dtype"], {"dim": None, "keepdim": False, "dtype": None})
        return _reduce(ctx, kind, _graph_tensor(p["input"]), p["dim"], p["keepdim"], p["dtype"])
    return h


# --- contractions, convolution, normalization -----------------------------------------------

def _matmul(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "other"])
    a, b = ctx.b.tensor(p["input"]), ctx.b.tensor(p["other"])
    if not a.shape or not b.shape:
        raise Unsupported("a 0-d operand")
    return ctx.b.add("matmul", [a, b], ctx.out_shape())


def _linear(ctx, x, weight, bias):
    torch = ctx.torch
    if not isinstance(weight, torch.Tensor) or not (bias is None or isinstance(bias, torch.Tensor)):
        raise Unsupported("a weight or bias computed from the inputs (only parameters)")
    if weight.dim() != 2 or not x.shape:
        raise Unsupported("weight of shape {} on input {}".format(list(weight.shape), x.shape))
    out_dim, in_dim = (int(s) for s in weight.shape)
    if bias is None:
        bias = torch.zeros(out_dim, dtype=torch.float64)
    return ctx.b.add("linear", [x], ctx.out_shape(), out_dim=out_dim, in_dim=in_dim,
                     weight=ctx.b.values(weight), bias=ctx.b.values(bias))


def _linear_fn(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "weight", "bias"], {"bias": None})
    return _linear(ctx, _graph_tensor(p["input"]), p["weight"], p["bias"])


def _conv(ctx, x, weight, bias, stride, padding, dilation, groups, r):
    torch = ctx.torch
    if not isinstance(weight, torch.Tensor) or not (bias is None or isinstance(bias, torch.Tensor)):
        raise Unsupported("a weight or bias computed from the inputs (only parameters)")
    kernel = [int(k) for k in weight.shape[2:]]
    if len(kernel) != r:
        raise Unsupported("weight of shape {}".format(list(weight.shape)))
    stride, dilation = _tuple(stride, r, "stride"), _tuple(dilation, r, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            before = after = [0] * r
        elif padding == "same":  # PyTorch puts the odd element of the total at the end
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            before = [t // 2 for t in total]
            after = [t - s for t, s in zip(total, before)]
        else:
            raise Unsupported("padding={!r}".format(padding))
    else:
        before = after = _tuple(padding, r, "padding")
    rank = len(x.shape)
    if rank < r + 1:
        raise Unsupported("input of rank {}".format(rank))
    out_channels, in_per_group = int(weight.shape[0]), int(weight.shape[1])
    if bias is None:
        bias = torch.zeros(out_channels, dtype=torch.float64)
    return ctx.b.add("conv", [x], ctx.out_shape(), spatial_rank=r, kernel=kernel, stride=stride,
                     padding=before, dilation=dilation, padding_after=after, groups=int(groups),
                     channel_axis=rank - r - 1, in_channels=in_per_group * int(groups),
                     out_channels=out_channels, input_spatial=x.shape[rank - r:],
                     weight=ctx.b.values(weight), bias=ctx.b.values(bias))


def _conv_fn(r):
    def h(ctx, args, kwargs):
        p = _bind(args, kwargs, ["input", "weight", "bias", "stride", "padding", "dilation", "groups"],
                  {"bias": None, "stride": 1, "padding": 0, "dilation": 1, "groups": 1})
        return _conv(ctx, _graph_tensor(p["input"]), p["weight"], p["bias"], p["stride"], p["padding"],
                     p["dilation"], p["groups"], r)
    return h


def _layer_norm(ctx, x, normalized_shape, weight, bias, eps):
    torch = ctx.torch
    ns = [int(normalized_shape)] if isinstance(normalized_shape, int) else [int(s) for s in normalized_shape]
    axis = len(x.shape) - len(ns)
    if axis < 0 or x.shape[axis:] != ns:
        raise Unsupported("normalized_shape {} for input {}".format(ns, x.shape))
    for v in (weight, bias):
        if v is not None and not isinstance(v, torch.Tensor):
            raise Unsupported("a weight or bias computed from the inputs (only parameters)")
    gamma = weight if weight is not None else torch.ones(ns, dtype=torch.float64)
    beta = bias if bias is not None else torch.zeros(ns, dtype=torch.float64)
    return ctx.b.add("layernorm", [x], x.shape, axis=axis, gamma=ctx.b.values(gamma),
                     beta=ctx.b.values(beta), eps=float(eps))


def _layer_norm_fn(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "normalized_shape", "weight", "bias", "eps"],
              {"weight": None, "bias": None, "eps": 1e-5})
    return _layer_norm(ctx, _graph_tensor(p["input"]), p["normalized_shape"], p["weight"], p["bias"], p["eps"])


# --- pooling --------------------------------------------------------------------------------

def _pool(ctx, kind, x, r, kernel, stride, padding, dilation=1, ceil_mode=False, return_indices=False,
          count_include_pad=True, divisor_override=None):
    k = _tuple(kernel, r, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _tuple(stride, r, "stride")
    pad = _tuple(padding, r, "padding")
    bad = []
    if _tuple(dilation, r, "dilation") != [1] * r:
        bad.append("dilation={}".format(dilation))
    if ceil_mode:
        bad.append("ceil_mode=True")
    if return_indices:
        bad.append("return_indices=True")
    if not count_include_pad and any(pad):
        bad.append("count_include_pad=False with padding")
    if divisor_override is not None:
        bad.append("divisor_override={}".format(divisor_override))
    if bad:
        raise Unsupported(", ".join(bad))
    return ctx.b.add(kind, [x], ctx.out_shape(), spatial_rank=r, kernel=k, stride=s, padding=pad)


def _max_pool_fn(r):
    def h(ctx, args, kwargs):
        p = _bind(args, kwargs, ["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
                                 "return_indices"],
                  {"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False, "return_indices": False})
        return _pool(ctx, "max_pool", _graph_tensor(p["input"]), r, p["kernel_size"], p["stride"], p["padding"],
                     p["dilation"], p["ceil_mode"], p["return_indices"])
    return h


def _avg_pool_fn(r):
    def h(ctx, args, kwargs):
        names = ["input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]
        if r > 1:
            names.append("divisor_override")
        p = _bind(args, kwargs, names, {"stride": None, "padding": 0, "ceil_mode": False,
                                        "count_include_pad": True, "divisor_override": None})
        return _pool(ctx, "avg_pool", _graph_tensor(p["input"]), r, p["kernel_size"], p["stride"], p["padding"],
                     ceil_mode=p["ceil_mode"], count_include_pad=p["count_include_pad"],
                     divisor_override=p["divisor_override"])
    return h


def _adaptive_avg(ctx, x, output_size, r):
    ins = x.shape[len(x.shape) - r:]
    outs = [output_size] * r if isinstance(output_size, int) else list(output_size)
    if len(outs) != r:
        raise Unsupported("output_size {}".format(output_size))
    outs = [i if o is None else int(o) for i, o in zip(ins, outs)]
    if any(o <= 0 or i % o for i, o in zip(ins, outs)):
        raise Unsupported("output_size {} does not divide the input size {} (uneven windows)".format(outs, ins))
    k = [i // o for i, o in zip(ins, outs)]  # even windows: avg_pool with stride = kernel
    return ctx.b.add("avg_pool", [x], ctx.out_shape(), spatial_rank=r, kernel=k, stride=k, padding=[0] * r)


def _adaptive_avg_fn(r):
    def h(ctx, args, kwargs):
        p = _bind(args, kwargs, ["input", "output_size"])
        return _adaptive_avg(ctx, _graph_tensor(p["input"]), p["output_size"], r)
    return h


def _dropout_fn(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "p", "training", "inplace"], {"p": 0.5, "training": True, "inplace": False})
    if p["training"] and p["p"] != 0:
        raise Unsupported("training=True (random); evaluate the module in eval mode")
    return _graph_tensor(p["input"])


# --- modules --------------------------------------------------------------------------------

def _m_unary(kind):
    return lambda ctx, m, args, kwargs: _unary(kind)(ctx, args[:1], {})


def _m_batch_norm(ctx, m, args, kwargs):
    torch = ctx.torch
    x = _graph_tensor(args[0])
    if m.training:
        raise Unsupported("in training mode (batch statistics); call .eval() first")
    if m.running_mean is None or m.running_var is None:
        raise Unsupported("track_running_stats=False (batch statistics)")
    c = int(m.num_features)
    gamma = m.weight if m.weight is not None else torch.ones(c, dtype=torch.float64)
    beta = m.bias if m.bias is not None else torch.zeros(c, dtype=torch.float64)
    return ctx.b.add("batch_norm_eval", [x], x.shape, channel_axis=1, channels=c,
                     gamma=ctx.b.values(gamma), beta=ctx.b.values(beta), mean=ctx.b.values(m.running_mean),
                     var=ctx.b.values(m.running_var), eps=float(m.eps))


def _m_conv(r):
    def h(ctx, m, args, kwargs):
        if m.padding_mode != "zeros":
            raise Unsupported("padding_mode={!r} (only 'zeros')".format(m.padding_mode))
        return _conv(ctx, _graph_tensor(args[0]), m.weight, m.bias, m.stride, m.padding, m.dilation, m.groups, r)
    return h


def _m_max_pool(r):
    return lambda ctx, m, args, kwargs: _pool(ctx, "max_pool", _graph_tensor(args[0]), r, m.kernel_size, m.stride,
                                              m.padding, m.dilation, m.ceil_mode, m.return_indices)


def _m_avg_pool(r):
    return lambda ctx, m, args, kwargs: _pool(ctx, "avg_pool", _graph_tensor(args[0]), r, m.kernel_size, m.stride,
                                              m.padding, 1, m.ceil_mode, False, m.count_include_pad,
                                              getattr(m, "divisor_override", None))


def _m_dropout(ctx, m, args, kwargs):
    if m.training and m.p != 0:
        raise Unsupported("in training mode (random); call .eval() first")
    return _graph_tensor(args[0])


def tables(torch):
    from ._fx_index import _chunk, _getitem, _narrow, _split, _unbind
    nn, F = torch.nn, torch.nn.functional
    modules = {
        nn.Linear: lambda ctx, m, a, k: _linear(ctx, _graph_tensor(a[0]), m.weight, m.bias),
        nn.Conv1d: _m_conv(1), nn.Conv2d: _m_conv(2), nn.Conv3d: _m_conv(3),
        nn.ReLU: _m_unary("relu"), nn.Tanh: _m_unary("tanh"), nn.Sigmoid: _m_unary("sigmoid"),
        nn.GELU: lambda ctx, m, a, k: _gelu(ctx, _graph_tensor(a[0]), getattr(m, "approximate", "none")),
        nn.Softplus: lambda ctx, m, a, k: _softplus(ctx, _graph_tensor(a[0]), m.beta, m.threshold),
        nn.BatchNorm1d: _m_batch_norm, nn.BatchNorm2d: _m_batch_norm, nn.BatchNorm3d: _m_batch_norm,
        nn.LayerNorm: lambda ctx, m, a, k: _layer_norm(ctx, _graph_tensor(a[0]), m.normalized_shape, m.weight,
                                                       m.bias, m.eps),
        nn.MaxPool1d: _m_max_pool(1), nn.MaxPool2d: _m_max_pool(2),
        nn.AvgPool1d: _m_avg_pool(1), nn.AvgPool2d: _m_avg_pool(2),
        nn.AdaptiveAvgPool1d: lambda ctx, m, a, k: _adaptive_avg(ctx, _graph_tensor(a[0]), m.output_size, 1),
        nn.AdaptiveAvgPool2d: lambda ctx, m, a, k: _adaptive_avg(ctx, _graph_tensor(a[0]), m.output_size, 2),
        nn.Flatten: lambda ctx, m, a, k: ctx.b.reshape(_graph_tensor(a[0]), ctx.out_shape()),
        nn.Unflatten: lambda ctx, m, a, k: ctx.b.reshape(_graph_tensor(a[0]), ctx.out_shape()),
        nn.Softmax: lambda ctx, m, a, k: _softmax(ctx, "softmax", _graph_tensor(a[0]), m.dim),
        nn.LogSoftmax: lambda ctx, m, a, k: _softmax(ctx, "log_softmax", _graph_tensor(a[0]), m.dim),
        nn.Dropout: _m_dropout, nn.Dropout2d: _m_dropout, nn.Dropout3d: _m_dropout, nn.AlphaDropout: _m_dropout,
        nn.Identity: lambda ctx, m, a, k: _graph_tensor(a[0]),
        nn.Hardtanh: lambda ctx, m, a, k: _clamp(ctx, _graph_tensor(a[0]), m.min_val, m.max_val),
        nn.ReLU6: lambda ctx, m, a, k: _clamp(ctx, _graph_tensor(a[0]), m.min_val, m.max_val),
        nn.SiLU: lambda ctx, m, a, k: _silu(ctx, _graph_tensor(a[0])),
        nn.LeakyReLU: lambda ctx, m, a, k: _leaky_relu(ctx, _graph_tensor(a[0]), m.negative_slope),
        nn.ELU: lambda ctx, m, a, k: _elu(ctx, _graph_tensor(a[0]), m.alpha),
        nn.Hardsigmoid: lambda ctx, m, a, k: _hardsigmoid(ctx, _graph_tensor(a[0])),
        nn.Hardswish: lambda ctx, m, a, k: _hardswish(ctx, _graph_tensor(a[0])),
    }
    # Modules refused with a reason (before their result's type is looked at).
    refused = {cls: "recurrent modules are not captured (their loop over time has no lowering)"
               for cls in (nn.LSTM, nn.GRU, nn.RNN)}
    refused[nn.MultiheadAttention] = "no lowering; write the attention with Linear, matmul and softmax (captured)"
    if hasattr(nn, "Dropout1d"):
        modules[nn.Dropout1d] = _m_dropout

    unary = {"relu": "relu", "tanh": "tanh", "sigmoid": "sigmoid", "exp": "exp", "log": "log", "sqrt": "sqrt",
             "rsqrt": "rsqrt", "abs": "abs", "sin": "sin", "cos": "cos", "erf": "erf", "neg": "neg",
             "negative": "neg", "reciprocal": "inv"}
    add, sub, mul = _binary("add", alpha=True), _binary("sub", alpha=True), _binary("mul_elem")
    reshape_names = ("reshape", "view", "flatten", "squeeze", "unsqueeze", "unflatten", "view_as", "reshape_as")
    functions = {
        operator.add: add, operator.iadd: add, operator.sub: sub, operator.isub: sub,
        operator.mul: mul, operator.imul: mul, operator.truediv: _div(), operator.itruediv: _div(),
        operator.neg: _unary("neg"), operator.matmul: _matmul, operator.pow: _pow(),
        torch.add: add, torch.sub: sub, torch.subtract: sub, torch.mul: mul, torch.multiply: mul,
        torch.rsub: _binary("sub", swap=True, alpha=True), torch.div: _div(), torch.divide: _div(),
        torch.true_divide: _div(), torch.pow: _pow(),
        torch.matmul: _matmul, torch.mm: _matmul, torch.bmm: _matmul,
        torch.cat: _cat, torch.concat: _cat, torch.stack: _stack,
        torch.sum: _reduction("reduce_sum"), torch.mean: _reduction("reduce_mean"),
        torch.permute: _permute, torch.transpose: _transpose, torch.swapaxes: _transpose, torch.t: _t,
        torch.broadcast_to: _expand, torch.clone: _alias, torch.detach: _detach, getattr: _getattr,
        operator.getitem: _getitem, torch.chunk: _chunk, torch.split: _split, torch.unbind: _unbind,
        torch.narrow: _narrow,
        torch.softmax: _softmax_like("softmax"), torch.log_softmax: _softmax_like("log_softmax"),
        F.softmax: _softmax_like("softmax"), F.log_softmax: _softmax_like("log_softmax"),
        F.relu: _unary("relu"), F.gelu: _gelu_fn, F.softplus: _softplus_fn,
        F.tanh: _unary("tanh"), F.sigmoid: _unary("sigmoid"),
        F.linear: _linear_fn, F.layer_norm: _layer_norm_fn, F.dropout: _dropout_fn,
        F.conv1d: _conv_fn(1), F.conv2d: _conv_fn(2), F.conv3d: _conv_fn(3),
        F.max_pool1d: _max_pool_fn(1), F.max_pool2d: _max_pool_fn(2),
        F.avg_pool1d: _avg_pool_fn(1), F.avg_pool2d: _avg_pool_fn(2),
        F.adaptive_avg_pool1d: _adaptive_avg_fn(1), F.adaptive_avg_pool2d: _adaptive_avg_fn(2),
        torch.clamp: _clamp_fn(["min", "max"]), torch.clip: _clamp_fn(["min", "max"]),
        torch.clamp_min: _clamp_fn(["min"]), torch.clamp_max: _clamp_max,
        F.hardtanh: _hardtanh, F.relu6: _relu6,
        F.silu: _activation_fn(_silu, [], {}),
        F.leaky_relu: _activation_fn(_leaky_relu, ["negative_slope"], {"negative_slope": 0.01}),
        F.elu: _activation_fn(_elu, ["alpha"], {"alpha": 1.0}),
        F.hardsigmoid: _activation_fn(_hardsigmoid, [], {}),
        F.hardswish: _activation_fn(_hardswish, [], {}),
    }
    for name in reshape_names:
        if hasattr(torch, name):
            functions[getattr(torch, name)] = _reshape_like
    for name, kind in unary.items():
        if hasattr(torch, name):
            functions[getattr(torch, name)] = _unary(kind)
    methods = {
        "add": add, "sub": sub, "mul": mul, "div": _div(), "true_divide": _div(),
        "pow": _pow(), "matmul": _matmul, "mm": _matmul, "bmm": _matmul,
        "sum": _reduction("reduce_sum"), "mean": _reduction("reduce_mean"),
        "permute": _permute, "transpose": _transpose, "swapaxes": _transpose, "t": _t,
        "expand": _expand, "expand_as": _expand, "broadcast_to": _expand,
        "contiguous": _alias, "clone": _alias, "detach": _detach,
        "chunk": _chunk, "split": _split, "unbind": _unbind, "narrow": _narrow,
        "to": _same_dtype, "float": _same_dtype, "double": _same_dtype, "type_as": _same_dtype,
        "softmax": _softmax_like("softmax"), "log_softmax": _softmax_like("log_softmax"),
        "clamp": _clamp_fn(["min", "max"]), "clip": _clamp_fn(["min", "max"]),
        "clamp_min": _clamp_fn(["min"]), "clamp_max": _clamp_max,
    }
    for name in reshape_names:
        methods[name] = _reshape_like
    for name, kind in unary.items():
        methods[name] = _unary(kind)
    random = {getattr(torch, n) for n in ("rand", "randn", "randint", "rand_like", "randn_like", "randint_like",
                                          "bernoulli", "multinomial", "normal", "randperm") if hasattr(torch, n)}
    return SimpleNamespace(modules=modules, functions=functions, methods=methods, random=random, refused=refused)
