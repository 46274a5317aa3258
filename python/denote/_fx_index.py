"""Slicing and splitting for the torch.fx capture (torch_capture.py, handlers registered in _fx_ops.tables):
x[key] with ints, positive-step slices, None and ..., and chunk / split / unbind / narrow, each a `gather`
along one axis with constant indices, then a `reshape`; chunk / split / unbind give a tuple of graph
tensors that getitem indexes."""

from ._fx_ops import _axis, _bind, _graph_tensor
from .torch_capture import Unsupported


def _take(ctx, x, axis, idx):
    """x restricted to the indices idx along axis (nothing when idx is the whole axis in order)."""
    if list(idx) == list(range(x.shape[axis])):
        return x
    shape = list(x.shape)
    shape[axis] = len(idx)
    return ctx.b.add("gather", [x], shape, axis=axis, indices=[int(i) for i in idx])


def _index_key(key):
    return list(key) if isinstance(key, tuple) else [key]


def _getitem(ctx, args, kwargs):
    """x[key] for ints, slices with a positive step, None and ...; an element of a chunk/split/unbind
    result. Tensor (advanced) indices are refused."""
    x, key = args[0], args[1]
    if x is None:
        raise Unsupported("of the result of an unsupported call above")
    if isinstance(x, (tuple, list)):
        if isinstance(key, bool) or not isinstance(key, int):
            raise Unsupported("an index {!r} into a tuple of tensors".format(key))
        return x[key]
    x = _graph_tensor(x)
    keys = _index_key(key)
    if sum(k is Ellipsis for k in keys) > 1:
        raise Unsupported("more than one Ellipsis")
    real = [k for k in keys if k is not None and k is not Ellipsis]
    if len(real) > len(x.shape):
        raise Unsupported("{} indices for a rank-{} tensor".format(len(real), len(x.shape)))
    if Ellipsis in keys:
        at = keys.index(Ellipsis)
        keys = keys[:at] + [slice(None)] * (len(x.shape) - len(real)) + keys[at + 1:]
    axis = 0
    for k in keys:
        if k is None:
            continue
        n = x.shape[axis]
        if isinstance(k, bool) or not isinstance(k, (int, slice)):
            raise Unsupported("an index of type {} (only ints, slices, None and ...)".format(type(k).__name__))
        if isinstance(k, int):
            if not -n <= k < n:
                raise Unsupported("index {} out of range for a dimension of {}".format(k, n))
            x = _take(ctx, x, axis, [k % n])
        else:
            if k.step is not None and k.step <= 0:
                raise Unsupported("slice step {} (only positive steps)".format(k.step))
            x = _take(ctx, x, axis, range(*k.indices(n)))
        axis += 1
    return ctx.b.reshape(x, ctx.out_shape())


def _pieces(ctx, x, dim, sizes):
    axis = _axis(dim, len(x.shape))
    out, at = [], 0
    for n in sizes:
        out.append(_take(ctx, x, axis, range(at, at + n)))
        at += n
    return axis, out


def _chunk(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "chunks", "dim"], {"dim": 0})
    x = _graph_tensor(p["input"])
    axis = _axis(p["dim"], len(x.shape))
    size = x.shape[axis]
    each = -(-size // int(p["chunks"]))
    sizes = [min(each, size - at) for at in range(0, size, each)] if size else [0]
    return tuple(_pieces(ctx, x, axis, sizes)[1])


def _split(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "split_size_or_sections", "dim"], {"dim": 0}, ignore=("split_size",))
    x = _graph_tensor(p["input"])
    axis = _axis(p["dim"], len(x.shape))
    size, sec = x.shape[axis], p["split_size_or_sections"]
    sizes = [min(int(sec), size - at) for at in range(0, size, int(sec))] if isinstance(sec, int) else [int(v) for v in sec]
    return tuple(_pieces(ctx, x, axis, sizes)[1])


def _unbind(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "dim"], {"dim": 0})
    x = _graph_tensor(p["input"])
    axis = _axis(p["dim"], len(x.shape))
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return tuple(ctx.b.reshape(t, shape) for t in _pieces(ctx, x, axis, [1] * x.shape[axis])[1])


def _narrow(ctx, args, kwargs):
    p = _bind(args, kwargs, ["input", "dim", "start", "length"])
    x = _graph_tensor(p["input"])
    axis = _axis(p["dim"], len(x.shape))
    start = int(p["start"]) % max(x.shape[axis], 1)
    return _take(ctx, x, axis, range(start, start + int(p["length"])))


