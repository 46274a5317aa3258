"""Capture a ``torch.nn.Module`` into a denote model (torchlean.ir.v1) through torch.fx.

``capture_json(module, example_inputs)`` traces the module with ``torch.fx.symbolic_trace``, runs
``ShapeProp`` on the example inputs (so every node's shape and dtype is known), and writes the
torchlean.ir.v1 document text, the weights inline as doubles (float32 values converted exactly).
``from_torch(module, example_inputs)`` loads that text into a ``denote.Model``.

torch is imported only when a capture runs, never at ``import denote``. The op mapping lives in
``_fx_ops.py``; docs/TORCH_CAPTURE.md lists what is supported and how each call is lowered.
"""

import json
import math
import operator

FORMAT = "torchlean.ir.v1"


class CaptureError(ValueError):
    """The module cannot be captured: ``problems`` is a list of ``(fx_node_name, what)`` pairs,
    one per unsupported call (all of them, not just the first)."""

    def __init__(self, problems, header=None):
        self.problems = list(problems)
        lines = [header or "denote.from_torch: {} unsupported call{} in the traced graph:".format(
            len(self.problems), "" if len(self.problems) == 1 else "s")]
        lines += ["  - node '{}': {}".format(name, what) for name, what in self.problems]
        super().__init__("\n".join(lines))


_error_class = None


def _make_error(problems, header=None):
    """A CaptureError that is also a ``denote.Error`` when the compiled module is importable."""
    global _error_class
    if _error_class is None:
        _error_class = CaptureError
        try:
            from . import Error as _DenoteError  # noqa: the compiled module's exception type
            try:  # its "unsupported" kind (a denote.Error) where the module has one
                from . import UnsupportedError as _Unsupported
                if isinstance(_Unsupported, type) and issubclass(_Unsupported, _DenoteError):
                    _DenoteError = _Unsupported
            except ImportError:
                pass
            if isinstance(_DenoteError, type) and issubclass(_DenoteError, BaseException) \
                    and not issubclass(CaptureError, _DenoteError):
                _error_class = type("CaptureError", (CaptureError, _DenoteError), {"__module__": __name__})
        except Exception:  # no package / no compiled module: the ValueError subclass alone
            pass
    return _error_class(problems, header)


class Unsupported(Exception):
    """Raised by an op handler: the call (or its configuration) has no faithful IR lowering."""


class T:
    """A tensor value of the IR graph being built: node id and shape."""
    __slots__ = ("id", "shape")

    def __init__(self, nid, shape):
        self.id = nid
        self.shape = list(shape)

    def __repr__(self):
        return "T({}, {})".format(self.id, self.shape)


def _num(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _finite_list(x):
    if isinstance(x, list):
        return [_finite_list(e) for e in x]
    return _num(x)


_ARRAY_MIN = 256  # from_torch: tensors of this many values or more bypass the JSON text


def _FLOAT_FORMATS(torch):
    """The float dtypes a capture takes, by denote's format names."""
    return {torch.float32: "binary32", torch.float64: "binary64", torch.bfloat16: "bfloat16",
            torch.float16: "binary16"}


class Builder:
    """Appends torchlean.ir.v1 node records; helpers for consts, broadcasts and reshapes."""

    def __init__(self, torch, arrays=None):
        self.torch = torch
        self.arrays = arrays  # a list: tensors of _ARRAY_MIN values or more go there, as {"array": k}
        self.nodes = []
        self.input_ids = []
        # Per node: the binary format of the torch value it belongs to (bfloat16 under autocast for a
        # Linear, ...), and whether it is that value (False: an interior piece of one torch call).
        self.formats = []
        self.materialized = set()
        self.current_format = None
        self._scalar_cache = {}
        self._tensor_cache = {}
        self._bcast_cache = {}

    def add(self, kind, parents, shape, **fields):
        nid = len(self.nodes)
        rec = {"id": nid, "kind": kind, "parents": [p.id if isinstance(p, T) else int(p) for p in parents],
               "shape": [int(s) for s in shape]}
        rec.update(fields)
        self.nodes.append(rec)
        self.formats.append(self.current_format)
        return T(nid, shape)

    def values(self, tensor):
        """Nested lists of doubles in the tensor's shape (exact for float32 and float64); with arrays, a
        large tensor's values as a flat float64 array apart and {"array": k} in the document."""
        t = tensor.detach().cpu().to(self.torch.float64)
        if self.arrays is not None and t.numel() >= _ARRAY_MIN:
            self.arrays.append(t.contiguous().numpy().reshape(-1))
            return {"array": len(self.arrays) - 1}
        v = t.tolist()
        if not bool(self.torch.isfinite(t).all()):
            v = _finite_list(v)
        return v

    def const_tensor(self, tensor):
        key = id(tensor)
        hit = self._tensor_cache.get(key)
        if hit is not None and hit[0] is tensor:
            return hit[1]
        if not (tensor.is_floating_point() and tensor.dtype in _FLOAT_FORMATS(self.torch)):
            raise Unsupported("a constant tensor of dtype {} (only float32/float64/bfloat16/float16)".format(
                tensor.dtype))
        shape = list(tensor.shape)
        t = self.add("const", [], shape, value_shape=shape, values=self.values(tensor))
        self._tensor_cache[key] = (tensor, t)
        return t

    def scalar(self, v):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise Unsupported("a Python value of type {} as a tensor operand".format(type(v).__name__))
        key = repr(float(v))
        t = self._scalar_cache.get(key)
        if t is None:
            t = self.add("const", [], [], value_shape=[], values=_num(v))
            self._scalar_cache[key] = t
        return t

    def tensor(self, v):
        if isinstance(v, T):
            return v
        if isinstance(v, self.torch.Tensor):
            return self.const_tensor(v)
        return self.scalar(v)

    def broadcast(self, v, shape):
        t = self.tensor(v)
        shape = list(shape)
        if t.shape == shape:
            return t
        key = (t.id, tuple(shape))
        hit = self._bcast_cache.get(key)
        if hit is None:
            hit = self.add("broadcast_to", [t], shape, from_shape=t.shape, to_shape=shape)
            self._bcast_cache[key] = hit
        return hit

    def reshape(self, v, shape):
        t = self.tensor(v)
        shape = list(shape)
        if t.shape == shape:
            return t
        return self.add("reshape", [t], shape, in_shape=t.shape, out_shape=shape)

    def document(self, output_ids):
        head = {"format": FORMAT}
        if len(self.input_ids) == 1:
            head["input_id"] = self.input_ids[0]
        else:
            head["input_ids"] = list(self.input_ids)
        head["output_ids"] = list(output_ids)
        lines = [json.dumps(head)[:-1] + ', "nodes": [']
        lines.append(",\n".join(" " + json.dumps(n, allow_nan=False) for n in self.nodes))
        lines.append("]}\n")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Tracing and shape propagation

_SHAPE_METHODS = {"size", "dim", "numel", "ndimension", "nelement"}
_SHAPE_ATTRS = {"shape", "ndim", "dtype", "device", "is_cuda", "requires_grad"}


def _is_shape_query(n):
    if n.op == "call_method":
        return n.target in _SHAPE_METHODS
    if n.op == "call_function" and n.target is getattr:
        return len(n.args) > 1 and n.args[1] in _SHAPE_ATTRS
    return False


def _trace(torch, module, example_inputs):
    import torch.fx
    from torch.fx.passes.shape_prop import ShapeProp

    if isinstance(module, torch.fx.GraphModule):
        gm = module
    else:
        try:
            gm = torch.fx.symbolic_trace(module)
        except Exception as e:  # control flow on tensor values, unsupported Python constructs
            raise _make_error([("<trace>", "torch.fx.symbolic_trace failed: {}: {}".format(type(e).__name__, e))],
                              "denote.from_torch: the module cannot be traced by torch.fx:")

    class _Prop(ShapeProp):
        # Also records which values depend on the input data ("dynamic") and the concrete value
        # of everything else (parameters, shapes, Python numbers, constant tensors).
        def run_node(self, n):
            result = super().run_node(n)
            if n.op == "placeholder":
                dyn = isinstance(result, torch.Tensor)
            elif n.op in ("call_function", "call_method", "call_module"):
                dyn = any(a.meta.get("denote_dynamic") for a in n.all_input_nodes) and not _is_shape_query(n)
            else:
                dyn = False
            n.meta["denote_dynamic"] = dyn
            if not dyn and n.op != "output":
                n.meta["denote_value"] = result
            return result

    # Running the module must not change it: a BatchNorm left in training mode would update its
    # running statistics and dropout would advance the RNG (the capture then refuses both).
    buffers = [(b, b.detach().clone()) for b in gm.buffers()]
    rng = torch.random.get_rng_state()
    try:
        with torch.no_grad():
            _Prop(gm).propagate(*example_inputs)
    except Exception as e:
        raise _make_error([("<shape_prop>", "running the traced module on example_inputs failed: {}: {}".format(
            type(e).__name__, e))], "denote.from_torch: ShapeProp failed:")
    finally:
        with torch.no_grad():
            for b, saved in buffers:
                b.copy_(saved)
        torch.random.set_rng_state(rng)
    return gm


# ---------------------------------------------------------------------------------------------
# Conversion

class Context:
    """What an op handler sees: the builder, the fx node, torch, and shape helpers."""

    def __init__(self, torch, builder):
        self.torch = torch
        self.b = builder
        self.node = None
        self.dtypes = set()

    def out_shape(self, n=None):
        n = n or self.node
        meta = n.meta.get("tensor_meta")
        if meta is None or not hasattr(meta, "shape"):
            raise Unsupported("a call whose result is not one tensor")
        return [int(s) for s in meta.shape]

    def out_dtype(self, n=None):
        n = n or self.node
        return n.meta["tensor_meta"].dtype


def _describe_target(torch, n, gm):
    if n.op == "call_module":
        mod = gm.get_submodule(n.target)
        cls = type(mod)
        name = "torch.nn." + cls.__name__ if getattr(torch.nn, cls.__name__, None) is cls else \
            "{}.{}".format(cls.__module__, cls.__qualname__)
        return "{} [submodule '{}']".format(name, n.target)
    if n.op == "call_method":
        return "Tensor." + str(n.target)
    t = n.target
    name = getattr(t, "__name__", None) or repr(t)
    for prefix, space in (("torch.", torch), ("torch.nn.functional.", torch.nn.functional), ("operator.", operator)):
        if getattr(space, name, None) is t:
            return prefix + name
    mod = getattr(t, "__module__", None)
    qual = getattr(t, "__qualname__", None) or name
    return "{}.{}".format(mod, qual) if mod else qual


def _materialize(ctx, v):
    """Static torch tensors met where a graph output is expected become const nodes."""
    if isinstance(v, (T,)):
        return v
    if isinstance(v, ctx.torch.Tensor):
        return ctx.b.const_tensor(v)
    raise Unsupported("a graph output that is not a tensor ({})".format(type(v).__name__))


def capture_json(module, example_inputs):
    """The torchlean.ir.v1 document (text) of ``module`` traced by torch.fx on ``example_inputs``
    (a tensor or a tuple/list of them, one per ``forward`` argument). Raises CaptureError (also a
    ``denote.Error`` when the compiled module is present) listing every unsupported call."""
    return _capture(module, example_inputs, None)


def _capture(module, example_inputs, arrays, precision=None):
    """capture_json's document; with a list `arrays`, the large tensors go there (denote.loads(text,
    arrays=arrays) reads them: no JSON text for the parameters). A dict `precision` receives per node
    "formats" (the format of the torch value it belongs to) and "materialized" (whether it is that
    value, not an interior piece of one torch call): the precision policy of a bfloat16 or autocast
    capture (docs/NUMERICS.md "Precision policies")."""
    import torch
    import torch.fx
    from . import _fx_ops

    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    gm = _trace(torch, module, example_inputs)
    tables = _fx_ops.tables(torch)
    b = Builder(torch, arrays)
    ctx = Context(torch, b)
    formats = _FLOAT_FORMATS(torch)
    env = {}
    problems = []
    outputs = []

    def lookup(a):
        return env[a.name]

    for n in gm.graph.nodes:
        ctx.node = n
        if n.op == "output":
            try:
                res = torch.fx.node.map_arg(n.args[0], lookup)
                items = _flatten_outputs(res)
                outputs = [_materialize(ctx, v).id for v in items]
            except Unsupported as e:
                problems.append((n.name, "output: {}".format(e)))
            continue
        if not n.meta.get("denote_dynamic"):
            env[n.name] = n.meta.get("denote_value")
            if n.op == "call_function" and n.target in tables.random:
                problems.append((n.name, "{}: random values (the captured graph would freeze one draw)".format(
                    _describe_target(torch, n, gm))))
            continue
        if n.op == "placeholder":
            meta = n.meta["tensor_meta"]
            if meta.dtype not in formats:
                problems.append((n.name, "input of dtype {} (only float32/float64/bfloat16/float16)".format(meta.dtype)))
            ctx.dtypes.add(meta.dtype)
            b.current_format = formats.get(meta.dtype)
            t = b.add("input", [], list(meta.shape))
            b.input_ids.append(t.id)
            b.materialized.add(t.id)
            env[n.name] = t
            continue
        what = _describe_target(torch, n, gm)
        try:
            args = torch.fx.node.map_arg(n.args, lookup)
            kwargs = torch.fx.node.map_arg(n.kwargs, lookup)
            meta = n.meta.get("tensor_meta")
            if n.op == "call_module" and type(gm.get_submodule(n.target)) in tables.refused:
                raise Unsupported(tables.refused[type(gm.get_submodule(n.target))])
            metas = _result_metas(meta)  # one per tensor of the result (chunk/split/unbind: several)
            for mt in metas:
                if mt.dtype not in formats:
                    raise Unsupported("it produces a {} tensor (only float32/float64/bfloat16/float16)".format(mt.dtype))
                ctx.dtypes.add(mt.dtype)
            b.current_format = formats[metas[0].dtype]
            _check_inplace(n, gm)
            if n.op == "call_module":
                mod = gm.get_submodule(n.target)
                handler = tables.modules.get(type(mod))
                if handler is None:
                    raise Unsupported(None)
                res = handler(ctx, mod, args, kwargs)
            elif n.op == "call_method":
                handler = tables.methods.get(n.target)
                if handler is None:
                    raise Unsupported(None)
                res = handler(ctx, args, kwargs)
            else:
                handler = tables.functions.get(n.target)
                if handler is None:
                    raise Unsupported(None)
                res = handler(ctx, args, kwargs)
            _check_result(res, metas, isinstance(meta, (tuple, list)))
            for r in (res if isinstance(res, (tuple, list)) else [res]):
                b.materialized.add(r.id)
            env[n.name] = res
        except Unsupported as e:
            msg = e.args[0] if e.args else None
            problems.append((n.name, what if msg is None else "{} ({})".format(what, msg)))
            env[n.name] = _placeholder_value(ctx, n)
        except Exception as e:  # malformed call: still one listed problem, not a crash
            problems.append((n.name, "{} ({}: {})".format(what, type(e).__name__, e)))
            env[n.name] = _placeholder_value(ctx, n)
    if len(ctx.dtypes) > 1 and torch.float64 in ctx.dtypes:
        problems.append(("<graph>", "tensors of several dtypes ({}); float64 only throughout (bfloat16, float16 and "
                         "float32 may mix, as under torch.autocast)".format(", ".join(sorted(str(d) for d in ctx.dtypes)))))
    if problems:
        raise _make_error(problems)
    if precision is not None:
        precision["formats"] = [f or "binary32" for f in b.formats]
        precision["materialized"] = [k in b.materialized for k in range(len(b.nodes))]
        precision["dtypes"] = {formats[d] for d in ctx.dtypes}
    return b.document(outputs)


def _flatten_outputs(v):
    """The output tensors in order: nested tuples/lists flattened, a dict by its values."""
    if isinstance(v, dict):
        v = list(v.values())
    if isinstance(v, (tuple, list)):
        return [t for e in v for t in _flatten_outputs(e)]
    return [v]


def _check_inplace(n, gm):
    """An in-place call changes a value other nodes may read later; the IR is pure, so it is
    captured only when its first operand is read by nothing else (ReLU(inplace=True) in a chain)."""
    if n.op == "call_method" and str(n.target).endswith("_") and not str(n.target).endswith("__"):
        raise Unsupported("an in-place method (use the out-of-place {})".format(str(n.target)[:-1]))
    inplace = bool(n.kwargs.get("inplace", False))
    if n.op == "call_module":
        inplace = inplace or bool(getattr(gm.get_submodule(n.target), "inplace", False))
    if n.op == "call_function" and getattr(n.target, "__name__", "").startswith("__i"):
        inplace = True
    if inplace and n.args and hasattr(n.args[0], "users") and len(n.args[0].users) > 1:
        raise Unsupported("in place on a value that other nodes also read")


def _result_metas(meta):
    """The tensor metadata of a node's result: one entry for a tensor, one per element for a tuple of
    tensors (chunk, split, unbind); Unsupported for anything else."""
    if meta is not None and hasattr(meta, "dtype"):
        return [meta]
    if isinstance(meta, (tuple, list)) and meta and all(hasattr(m, "dtype") for m in meta):
        return list(meta)
    raise Unsupported("its result is not one tensor or a tuple of tensors (a data-dependent Python value)")


def _check_result(res, metas, is_tuple):
    got = list(res) if is_tuple and isinstance(res, (tuple, list)) else [res]
    want = [[int(d) for d in m.shape] for m in metas]
    if len(got) != len(want) or any(not isinstance(g, T) or g.shape != w for g, w in zip(got, want)):
        raise Unsupported("internal: lowered to shapes {} but PyTorch gives {}".format(
            [getattr(g, "shape", None) for g in got], want))


def _placeholder_value(ctx, n):
    """Stands in for an unsupported node so that later nodes are still checked (and listed)."""
    meta = n.meta.get("tensor_meta")
    if meta is not None and hasattr(meta, "shape"):
        return ctx.b.add("input", [], [int(s) for s in meta.shape])
    if isinstance(meta, (tuple, list)) and all(hasattr(m, "shape") for m in meta):
        return tuple(ctx.b.add("input", [], [int(s) for s in m.shape]) for m in meta)
    return None


def from_torch(module, example_inputs):
    """Capture ``module`` (a torch.nn.Module, traced by torch.fx on ``example_inputs``) as a
    ``denote.Model`` with its payload; see ``capture_json``. The model's ``arith`` is the capture's
    dtype ("f32" for float32, "f64" for float64; one dtype throughout), which bounds() and verify()
    then default to. A bfloat16 or float16 module, or one captured under ``torch.autocast("cpu")``,
    records its precision policy (``Model.precision``: each value's format, binary32 accumulation), and
    ``run(x, arith="auto")`` computes what torch computes."""
    import torch

    arrays = []
    precision = {}
    text = _capture(module, example_inputs, arrays, precision)
    from . import loads
    model = loads(text, arrays=arrays)
    dtypes = precision["dtypes"]
    if dtypes == {"binary32"}:
        model.arith = "f32"
    elif dtypes == {"binary64"}:
        model.arith = "f64"
    elif dtypes:  # bfloat16/float16, alone or with float32 (autocast): torch's opmath, binary32
        model._set_precision(precision["formats"], precision["materialized"], "binary32")
    return model


__all__ = ["CaptureError", "capture_json", "from_torch", "FORMAT"]
