#!/usr/bin/python3
"""Generates the PyTorch-parity golden cases under tests/data/golden/ (run offline, never at test time).

Usage (Debian's interpreter with python3-torch 1.13 and numpy):
    /usr/bin/python3 tests/golden/gen_torch_golden.py [--out DIR]

Every case directory gets:
    model.json        a torchlean.ir.v1 document (inputs are `input` nodes; payload fields inline)
    input_<k>.npy     float64, C order, one per input node in id order
    expected_f64.npy  PyTorch's output computed in float64
    expected_f32.npy  PyTorch's output computed in float32 from the inputs and parameters cast to float32

The graph is written by hand here (not by denote), and the expected values come from PyTorch, except
where PyTorch has no such op or no value: rand_uniform / bernoulli_mask (an independent Python
implementation of the splitmix64 stream of SPEC-IR.md), an oversized pooling window (PyTorch raises; the
IR gives an empty axis), mse_loss of an empty tensor (PyTorch gives NaN; the IR divides by 1) and the
fully blocked row of hard_masked_softmax (PyTorch gives NaN; the IR gives 0). Those are marked in the
summary. The script is deterministic: per-case seeds derive from the case name, torch runs on one thread.
"""
import argparse
import json
import math
import os
import shutil
import sys
import zlib

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

MASK64 = (1 << 64) - 1


# ---------------------------------------------------------------- splitmix64 stream (SPEC-IR.md)
def splitmix64(x):
    """Vigna's SplitMix64 as a pure function of its input: mix(x + golden gamma), all mod 2^64."""
    z = (x + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return (z ^ (z >> 31)) & MASK64


def uniform_stream(seed, node_id, count):
    """The 32-bit integers m_j = splitmix64(key + j) mod 2^32, key = splitmix64(seed + node id)."""
    key = splitmix64((seed + node_id) & MASK64)
    return [splitmix64((key + j) & MASK64) & 0xFFFFFFFF for j in range(count)]


def uniform_values(seed, node_id, shape):
    m = uniform_stream(seed, node_id, int(np.prod(shape, dtype=np.int64)))
    u64 = np.array([v / 4294967296.0 for v in m], dtype=np.float64).reshape(shape)   # exact in binary64
    u32 = (np.array(m, dtype=np.float64).astype(np.float32) / np.float32(4294967296.0)).reshape(shape)
    return u64, u32


# ---------------------------------------------------------------- case builder
class Case:
    def __init__(self, name, note=""):
        self.name = name
        self.note = note
        self.nodes = []
        self.inputs = []        # (node id, float64 array)
        self.output = None
        self.ref = None         # fn(T) -> torch tensor, T maps input ids / numpy arrays to tensors
        self.custom = None      # (f64 array, f32 array) when the expected value is not from torch
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))

    def node(self, kind, parents, shape, **fields):
        nid = len(self.nodes)
        d = {"id": nid, "kind": kind, "parents": list(parents), "shape": list(shape)}
        for k, v in fields.items():
            d[k] = tolist(v)
        self.nodes.append(d)
        return nid

    def input(self, arr):
        arr = np.array(arr, dtype=np.float64, order="C")
        nid = self.node("input", [], arr.shape)
        self.inputs.append((nid, arr))
        return nid

    def shape(self, nid):
        return tuple(self.nodes[nid]["shape"])

    def expect(self, out, ref):
        # Evaluated at once, so closures see the case's own node ids and arrays.
        self.output, self.ref = out, ref
        self.result = evaluate(self)

    def expect_values(self, out, f64, f32):
        self.output, self.custom = out, (np.asarray(f64, np.float64), np.asarray(f32, np.float32))
        self.result = self.custom

    # Random data helpers (float64, deterministic per case).
    def normal(self, *shape, scale=1.0):
        return self.rng.normal(size=shape) * scale

    def uniform(self, lo, hi, *shape):
        return self.rng.uniform(lo, hi, size=shape)


def tolist(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (tuple, list)):
        return [tolist(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


def make_T(case, dtype):
    values = {nid: arr for nid, arr in case.inputs}

    def T(x):
        if isinstance(x, int):
            x = values[x]
        return torch.tensor(np.asarray(x, dtype=np.float64), dtype=torch.float64).to(dtype)
    return T


def evaluate(case):
    if case.custom is not None:
        return case.custom
    outs = []
    for dt in (torch.float64, torch.float32):
        with torch.no_grad():
            y = case.ref(make_T(case, dt))
        assert y.dtype == dt, (case.name, y.dtype)
        outs.append(y.detach().contiguous().numpy())
    return outs[0].astype(np.float64), outs[1].astype(np.float32)


def model_json(case):
    ids = [nid for nid, _ in case.inputs]
    head = {"format": "torchlean.ir.v1"}
    if len(ids) == 1:
        head["input_id"] = ids[0]
    else:
        head["input_ids"] = ids
    head["output_ids"] = [case.output]
    text = json.dumps(head)[:-1] + ', "nodes": [\n'
    text += ",\n".join(" " + json.dumps(n, allow_nan=False) for n in case.nodes)
    return text + "\n]}\n"


# ---------------------------------------------------------------- torch helpers for IR geometry
def torch_conv(x, w, b, channel_axis, stride, dilation, before, after, groups):
    lead = x.shape[:channel_axis]
    xs = x.reshape((-1,) + tuple(x.shape[channel_axis:]))
    pad = []
    for i in reversed(range(len(stride))):
        pad += [before[i], after[i]]
    xs = F.pad(xs, pad)
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[len(stride)]
    y = conv(xs, w, b, stride=stride, padding=0, dilation=dilation, groups=groups)
    return y.reshape(tuple(lead) + tuple(y.shape[1:]))


def torch_pool(kind, x, kernel, stride, padding):
    r = len(kernel)
    lead = x.shape[:x.dim() - r]
    xs = x.reshape((1, -1) + tuple(x.shape[x.dim() - r:]))
    if kind == "max":
        fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[r]
        y = fn(xs, kernel, stride, padding)
    else:
        fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[r]
        y = fn(xs, kernel, stride, padding, count_include_pad=True)
    return y.reshape(tuple(lead) + tuple(y.shape[2:]))


def torch_batch_norm(x, axis, gamma, beta, mean, var, eps):
    xm = torch.movedim(x, axis, 1) if x.dim() > 1 else x
    y = F.batch_norm(xm, mean, var, gamma, beta, training=False, eps=eps)
    return torch.movedim(y, 1, axis) if x.dim() > 1 else y


def pool_extent(n, k, s, p):
    if n == 0 or k == 0 or p > k // 2 or n + 2 * p < k:
        return 0
    return (n + 2 * p - k) // s + 1


# ---------------------------------------------------------------- cases
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def unary_case(name, kind, data, ref, note="", **attrs):
    c = Case(name, note)
    x = c.input(data)
    y = c.node(kind, [x], c.shape(x), **attrs)
    c.expect(y, lambda T: ref(T(x)))
    return c


def binary_case(name, kind, a, b, ref, note=""):
    c = Case(name, note)
    x = c.input(a)
    y = c.input(b)
    z = c.node(kind, [x, y], c.shape(x))
    c.expect(z, lambda T: ref(T(x), T(y)))
    return c


@case
def elementwise_unary():
    r = np.random.default_rng(7)
    n = lambda *s: r.normal(size=s)
    u = lambda lo, hi, *s: r.uniform(lo, hi, size=s)
    out = [
        unary_case("abs", "abs", np.concatenate([n(11), [0.0, -0.0, -2.5]]), torch.abs),
        unary_case("neg", "neg", np.concatenate([n(11), [0.0, 3.0, -1e-300]]), torch.neg),
        unary_case("relu", "relu", np.concatenate([n(3, 4).ravel(), [0.0, -0.0, math.nan]]), torch.relu),
        unary_case("sqrt", "sqrt", np.concatenate([u(0, 9, 10), [0.0, 4.0, 1e-8, 1e8]]), torch.sqrt),
        unary_case("rsqrt", "rsqrt", np.concatenate([u(0.01, 9, 10), [1.0, 4.0, 1e-8, 1e8]]), torch.rsqrt),
        unary_case("inv", "inv", np.concatenate([n(3, 4).ravel(), [-0.125, 3.0, 1e-5]]), torch.reciprocal),
        unary_case("exp", "exp", np.concatenate([u(-6, 6, 12), [0.0, -20.0, 30.0]]), torch.exp),
        unary_case("log", "log", np.concatenate([u(1e-3, 50, 12), [1.0, 1e-10, 1e10]]), torch.log),
        unary_case("sin", "sin", np.concatenate([u(-10, 10, 12), [0.0, 1e-7, 3.0]]), torch.sin),
        unary_case("cos", "cos", np.concatenate([u(-10, 10, 12), [0.0, 1e-7, 1.5]]), torch.cos),
        unary_case("sigmoid", "sigmoid", np.concatenate([u(-10, 10, 12), [0.0, -30.0, 30.0]]), torch.sigmoid),
        unary_case("tanh", "tanh", np.concatenate([u(-5, 5, 12), [0.0, 1e-6, -20.0]]), torch.tanh),
        unary_case("erf", "erf", np.concatenate([u(-3, 3, 12), [0.0, 1e-6, -6.0]]), torch.erf),
        unary_case("gelu", "gelu", np.concatenate([u(-4, 4, 14).reshape(2, 7), [[0.0, 1e-6, -0.7518, 5.0, -1.0, 1.0, 0.5]]]),
                   lambda x: F.gelu(x, approximate="none")),
        # F.softplus(beta=1, threshold=20) returns x itself above 20, so these inputs stay in [-15, 15].
        unary_case("softplus", "softplus", np.concatenate([u(-15, 15, 12), [0.0, 1e-6, -1e-6]]), F.softplus),
        # Wide range. F.softplus returns x itself above its threshold 20 (off by e^-x), and torch.logaddexp
        # computes log(1 + e^-d) (loses e^-d below ~1e-16): take logaddexp(x, 0) for x > 0 (max + log(1 + e^-x),
        # accurate there) and F.softplus = log1p(e^x) for x <= 0.
        unary_case("softplus_wide", "softplus", np.array([-80.0, -30.0, -20.5, 20.5, 25.0, 40.0, 80.0, 300.0]),
                   lambda x: torch.where(x > 0, torch.logaddexp(x, torch.zeros_like(x)), F.softplus(x)),
                   note="x > 0: torch.logaddexp(x, 0) (F.softplus cuts off at 20); x <= 0: F.softplus"),
        unary_case("clamp_min", "clamp_min", np.concatenate([n(12), [0.25, -0.0, 0.2500001]]),
                   lambda x: torch.clamp_min(x, 0.25), bound=0.25),
        unary_case("clamp_min_neg_bound", "clamp_min", n(3, 5), lambda x: torch.clamp_min(x, -0.3), bound=-0.3),
        unary_case("detach", "detach", n(2, 3), lambda x: x.detach()),
    ]
    return out


@case
def elementwise_binary():
    r = np.random.default_rng(11)
    n = lambda *s: r.normal(size=s)
    out = [
        binary_case("add", "add", n(3, 4), n(3, 4), torch.add),
        binary_case("sub", "sub", n(3, 4), n(3, 4), torch.sub),
        binary_case("mul_elem", "mul_elem", n(3, 4), n(3, 4), torch.mul),
        binary_case("div", "div", n(3, 4), np.where(r.random((3, 4)) < 0.5, -1, 1) * r.uniform(0.1, 3, (3, 4)),
                    torch.div),
    ]
    a = n(3, 5)
    b = n(3, 5)
    a[0, 0] = b[0, 0] = 0.5          # tie
    a[0, 1], b[0, 1] = math.nan, 1.0  # NaN propagates (torch.maximum / torch.minimum)
    a[0, 2], b[0, 2] = -2.0, math.nan
    out.append(binary_case("max_elem", "max_elem", a, b, torch.maximum))
    out.append(binary_case("min_elem", "min_elem", a.copy(), b.copy(), torch.minimum))
    # Division family with negative operands: multiples of 0.25 so the quotient is clean, plus exact multiples.
    num = r.integers(-40, 41, size=(4, 6)) / 4.0
    den = r.integers(1, 17, size=(4, 6)) / 4.0 * np.where(r.random((4, 6)) < 0.5, -1, 1)
    num[0, :4] = [-6.0, 6.0, -6.0, 0.0]
    den[0, :4] = [3.0, -3.0, -2.0, -2.0]
    num[1, :4] = [-7.0, 7.0, -7.0, 7.0]
    den[1, :4] = [2.0, 2.0, -2.0, -2.0]
    out.append(binary_case("div_trunc", "div_trunc", num, den, lambda x, y: torch.div(x, y, rounding_mode="trunc")))
    out.append(binary_case("div_floor", "div_floor", num, den, lambda x, y: torch.div(x, y, rounding_mode="floor")))
    out.append(binary_case("remainder", "remainder", num, den, torch.remainder))
    # Quotients whose rounded value a / b lands on an integer although the exact quotient is below it.
    num2 = np.array([1.0, -1.0, 0.7, 3.0, -0.3, 5.0])
    den2 = np.array([0.1, 0.1, 0.1, 0.1, 0.1, 0.1])
    out.append(binary_case("div_floor_inexact", "div_floor", num2, den2,
                           lambda x, y: torch.div(x, y, rounding_mode="floor"),
                           note="exact quotient just below an integer that a / b rounds up to"))
    out.append(binary_case("remainder_inexact", "remainder", num2.copy(), den2.copy(), torch.remainder))
    # pow: positive bases with real exponents, negative bases with integer exponents, 0^0, 0^-1, (-2)^0.5.
    base = np.concatenate([r.uniform(0.1, 3, 8), [-2.0, -1.5, -3.0, 0.0, 0.0, -2.0]])
    expo = np.concatenate([r.uniform(-2, 3, 8), [3.0, 2.0, -1.0, 0.0, -1.0, 0.5]])
    out.append(binary_case("pow", "pow", base, expo, torch.pow))
    return out


@case
def safe_log():
    out = []
    for name, eps in (("safe_log", 1e-6), ("safe_log_eps_tenth", 0.1)):
        c = Case(name)
        x = c.input(np.concatenate([c.uniform(-6, 6, 10), [-30.0, 0.0, 20.0]]))
        e = c.node("const", [], [], value_shape=[], values=eps)
        y = c.node("safe_log", [x, e], c.shape(x))
        c.expect(y, lambda T, x=x, eps=eps: torch.log(F.softplus(T(x)) + T(np.array(eps))))
        out.append(c)
    return out


@case
def layout():
    out = []
    c = Case("permute_3d")
    x = c.input(c.normal(2, 3, 4))
    c.expect(c.node("permute", [x], [4, 2, 3], perm=[2, 0, 1]), lambda T: T(x).permute(2, 0, 1))
    out.append(c)
    c = Case("permute_4d")
    x = c.input(c.normal(2, 3, 1, 2))
    c.expect(c.node("permute", [x], [2, 3, 2, 1], perm=[3, 1, 0, 2]), lambda T: T(x).permute(3, 1, 0, 2))
    out.append(c)
    c = Case("transpose_0_2")
    x = c.input(c.normal(2, 3, 4))
    c.expect(c.node("transpose", [x], [4, 3, 2], axis1=0, axis2=2), lambda T: T(x).transpose(0, 2))
    out.append(c)
    c = Case("transpose_same_axis")
    x = c.input(c.normal(2, 3))
    c.expect(c.node("transpose", [x], [2, 3], axis1=1, axis2=1), lambda T: T(x).transpose(1, 1))
    out.append(c)
    c = Case("broadcast_to")
    x = c.input(c.normal(3, 1))
    c.expect(c.node("broadcast_to", [x], [2, 3, 4], from_shape=[3, 1], to_shape=[2, 3, 4]),
             lambda T: torch.broadcast_to(T(x), (2, 3, 4)))
    out.append(c)
    c = Case("broadcast_to_scalar")
    x = c.input(np.array(1.75))
    c.expect(c.node("broadcast_to", [x], [2, 3], from_shape=[], to_shape=[2, 3]),
             lambda T: torch.broadcast_to(T(x), (2, 3)))
    out.append(c)
    c = Case("reshape")
    x = c.input(c.normal(2, 3, 4))
    c.expect(c.node("reshape", [x], [4, 6], in_shape=[2, 3, 4], out_shape=[4, 6]), lambda T: T(x).reshape(4, 6))
    out.append(c)
    c = Case("flatten")
    x = c.input(c.normal(2, 3, 4))
    c.expect(c.node("flatten", [x], [24], value_shape=[2, 3, 4]), lambda T: torch.flatten(T(x)))
    out.append(c)
    c = Case("concat_axis1_three")
    a, b, d = c.input(c.normal(2, 3, 4)), c.input(c.normal(2, 1, 4)), c.input(c.normal(2, 2, 4))
    c.expect(c.node("concat", [a, b, d], [2, 6, 4], axis=1), lambda T: torch.cat([T(a), T(b), T(d)], dim=1))
    out.append(c)
    c = Case("concat_axis0")
    a, b = c.input(c.normal(1, 3)), c.input(c.normal(2, 3))
    c.expect(c.node("concat", [a, b], [3, 3], axis=0), lambda T: torch.cat([T(a), T(b)], dim=0))
    out.append(c)
    c = Case("concat_axis2")
    a, b = c.input(c.normal(2, 3, 2)), c.input(c.normal(2, 3, 3))
    c.expect(c.node("concat", [a, b], [2, 3, 5], axis=2), lambda T: torch.cat([T(a), T(b)], dim=2))
    out.append(c)
    c = Case("const_add")
    x = c.input(c.normal(2, 3))
    vals = c.normal(2, 3)
    k = c.node("const", [], [2, 3], value_shape=[2, 3], values=vals)
    c.expect(c.node("add", [x, k], [2, 3]), lambda T: T(x) + T(vals))
    out.append(c)
    return out


@case
def reductions():
    out = []
    c = Case("sum")
    x = c.input(c.normal(2, 3, 4))
    c.expect(c.node("sum", [x], []), lambda T: torch.sum(T(x)))
    out.append(c)
    c = Case("sum_1d")
    x = c.input(c.normal(7))
    c.expect(c.node("sum", [x], []), lambda T: torch.sum(T(x)))
    out.append(c)
    for kind, fn in (("reduce_sum", torch.sum), ("reduce_mean", torch.mean)):
        for axis in (0, 1, 2):
            c = Case(f"{kind}_axis{axis}")
            x = c.input(c.normal(2, 3, 4))
            shape = [d for i, d in enumerate((2, 3, 4)) if i != axis]
            c.expect(c.node(kind, [x], shape, axes=[axis], keepdim=False), lambda T, x=x, a=axis, f=fn: f(T(x), dim=a))
            out.append(c)
    c = Case("reduce_mean_axes02_keepdim")
    x = c.input(c.normal(2, 3, 4))
    c.expect(c.node("reduce_mean", [x], [1, 3, 1], axes=[0, 2], keepdim=True),
             lambda T: torch.mean(T(x), dim=(0, 2), keepdim=True))
    out.append(c)
    c = Case("reduce_sum_axes20")
    x = c.input(c.normal(2, 3, 4))
    c.expect(c.node("reduce_sum", [x], [3], axes=[2, 0], keepdim=False), lambda T: torch.sum(T(x), dim=(2, 0)))
    out.append(c)
    c = Case("mse_loss")
    y, t = c.input(c.normal(3, 4)), c.input(c.normal(3, 4))
    c.expect(c.node("mse_loss", [y, t], []), lambda T: F.mse_loss(T(y), T(t)))
    out.append(c)
    c = Case("mse_loss_empty", note="hand value 0: PyTorch gives NaN for an empty mean, the IR divides by 1")
    y, t = c.input(np.zeros((0, 3))), c.input(np.zeros((0, 3)))
    c.expect_values(c.node("mse_loss", [y, t], []), np.array(0.0), np.array(0.0, np.float32))
    out.append(c)
    return out


@case
def contractions():
    out = []
    shapes = [("matmul_broadcast", (2, 1, 3, 4), (5, 4, 2)), ("matmul_2d", (3, 4), (4, 5)),
              ("matmul_vec_vec", (4,), (4,)), ("matmul_vec_mat", (4,), (4, 3)), ("matmul_mat_vec", (3, 4), (4,)),
              ("matmul_batch_vec", (2, 3, 4), (4,)), ("matmul_vec_batch", (4,), (2, 4, 3)),
              ("matmul_batch_both", (3, 2, 4), (3, 4, 2))]
    for name, sa, sb in shapes:
        c = Case(name)
        a, b = c.input(c.normal(*sa)), c.input(c.normal(*sb))
        shape = list(torch.matmul(torch.zeros(sa), torch.zeros(sb)).shape)
        c.expect(c.node("matmul", [a, b], shape), lambda T, a=a, b=b: torch.matmul(T(a), T(b)))
        out.append(c)
    for name, sx in (("linear_1d", (4,)), ("linear_leading", (2, 3, 4))):
        c = Case(name)
        x = c.input(c.normal(*sx))
        W, bias = c.normal(5, 4, scale=0.5), c.normal(5, scale=0.1)
        y = c.node("linear", [x], list(sx[:-1]) + [5], out_dim=5, in_dim=4, weight=W, bias=bias)
        c.expect(y, lambda T, x=x, W=W, bias=bias: F.linear(T(x), T(W), T(bias)))
        out.append(c)
    return out


def conv_case(name, in_shape, channel_axis, out_ch, kernel, stride, dilation, before, after, groups):
    c = Case(name)
    x = c.input(c.normal(*in_shape))
    in_ch = in_shape[channel_axis]
    W = c.normal(out_ch, in_ch // groups, *kernel, scale=0.5)
    bias = c.normal(out_ch, scale=0.1)
    spatial = list(in_shape[channel_axis + 1:])
    out_shape = list(in_shape[:channel_axis]) + [out_ch]
    for i, n in enumerate(spatial):
        eff = dilation[i] * (kernel[i] - 1) + 1
        out_shape.append((n + before[i] + after[i] - eff) // stride[i] + 1)
    y = c.node("conv", [x], out_shape, spatial_rank=len(kernel), kernel=kernel, stride=stride, padding=before,
               dilation=dilation, padding_after=after, groups=groups, channel_axis=channel_axis, in_channels=in_ch,
               out_channels=out_ch, input_spatial=spatial, weight=W, bias=bias)
    c.expect(y, lambda T: torch_conv(T(x), T(W), T(bias), channel_axis, stride, dilation, before, after, groups))
    return c


@case
def convolutions():
    return [
        conv_case("conv2d_grouped_dilated_asym", (2, 4, 6, 7), 1, 6, [3, 2], [2, 1], [2, 1], [1, 0], [2, 1], 2),
        conv_case("conv2d_nobatch", (3, 5, 5), 0, 2, [3, 3], [1, 1], [1, 1], [1, 1], [1, 1], 1),
        conv_case("conv2d_batch", (2, 3, 5, 4), 1, 2, [2, 3], [1, 2], [1, 1], [0, 1], [0, 1], 1),
        conv_case("conv1d_nobatch", (3, 9), 0, 4, [3], [2], [1], [1], [1], 1),
        conv_case("conv1d_two_leading", (2, 2, 3, 8), 2, 2, [2], [1], [3], [0], [0], 1),
        conv_case("conv1d_depthwise_asym", (1, 4, 7), 1, 4, [3], [1], [1], [0], [2], 4),
        conv_case("conv3d", (1, 2, 4, 5, 3), 1, 3, [2, 3, 2], [1, 2, 1], [1, 1, 2], [1, 0, 1], [1, 0, 1], 1),
        conv_case("conv3d_nobatch_grouped", (4, 3, 4, 4), 0, 2, [2, 2, 2], [1, 1, 2], [1, 1, 1], [0, 1, 0],
                  [1, 0, 1], 2),
    ]


def pool_case(name, kind, in_shape, kernel, stride, padding, note=""):
    c = Case(name, note)
    x = c.input(c.normal(*in_shape))
    r = len(kernel)
    out_shape = list(in_shape[:len(in_shape) - r])
    for i, n in enumerate(in_shape[len(in_shape) - r:]):
        out_shape.append(pool_extent(n, kernel[i], stride[i], padding[i]))
    y = c.node(kind + "_pool", [x], out_shape, spatial_rank=r, kernel=kernel, stride=stride, padding=padding)
    if 0 in out_shape:
        c.expect_values(y, np.zeros(out_shape), np.zeros(out_shape, np.float32))
    else:
        c.expect(y, lambda T: torch_pool(kind, T(x), kernel, stride, padding))
    return c


@case
def pools():
    out = []
    empty = "hand value (empty): PyTorch raises for a window larger than the padded input"
    for kind in ("max", "avg"):
        out += [
            pool_case(f"{kind}_pool1d_pad", kind, (2, 3, 9), [3], [2], [1]),
            pool_case(f"{kind}_pool1d_rank1", kind, (7,), [2], [2], [0]),
            pool_case(f"{kind}_pool2d_pad", kind, (1, 2, 5, 6), [2, 3], [2, 2], [1, 1]),
            pool_case(f"{kind}_pool2d_stride1", kind, (2, 4, 4), [2, 2], [1, 1], [0, 0]),
            pool_case(f"{kind}_pool2d_pad_rank2", kind, (4, 5), [3, 3], [2, 1], [1, 1]),
            pool_case(f"{kind}_pool2d_oversized", kind, (2, 3, 4), [5, 2], [1, 2], [0, 0], note=empty),
            pool_case(f"{kind}_pool1d_oversized", kind, (3, 2), [5], [1], [1], note=empty),
        ]
    return out


@case
def normalization():
    out = []
    for kind, fn in (("softmax", torch.softmax), ("log_softmax", torch.log_softmax)):
        for axis in (0, 1, 2):
            c = Case(f"{kind}_axis{axis}")
            x = c.input(c.normal(2, 3, 4, scale=2.0))
            c.expect(c.node(kind, [x], [2, 3, 4], axis=axis), lambda T, x=x, a=axis, f=fn: f(T(x), dim=a))
            out.append(c)
        c = Case(f"{kind}_large_offset")
        x = c.input(c.normal(3, 5) + np.array([[500.0], [-800.0], [0.0]]))
        c.expect(c.node(kind, [x], [3, 5], axis=1), lambda T, x=x, f=fn: f(T(x), dim=1))
        out.append(c)
    # layernorm: gamma/beta over x.shape[axis:], population variance.
    for name, shape, axis, with_params, eps in (("layernorm_axis1", (2, 3, 4), 1, True, 1e-5),
                                                ("layernorm_axis2", (2, 3, 4), 2, True, 1e-3),
                                                ("layernorm_axis0", (2, 3), 0, True, 1e-5),
                                                ("layernorm_default_params", (3, 5), 1, False, 1e-5)):
        c = Case(name)
        x = c.input(c.normal(*shape) * 2.0 + 0.5)
        ns = list(shape[axis:])
        if with_params:
            g, b = 1.0 + c.normal(*ns, scale=0.2), c.normal(*ns, scale=0.1)
            y = c.node("layernorm", [x], shape, axis=axis, gamma=g, beta=b, eps=eps)
            c.expect(y, lambda T, x=x, ns=ns, g=g, b=b, eps=eps: F.layer_norm(T(x), ns, T(g), T(b), eps))
        else:
            y = c.node("layernorm", [x], shape, axis=axis)
            c.expect(y, lambda T, x=x, ns=ns: F.layer_norm(T(x), ns, None, None, 1e-5))
        out.append(c)
    for name, shape, axis, eps in (("batch_norm_eval_axis1", (2, 3, 4), 1, 1e-5),
                                   ("batch_norm_eval_mid_axis", (2, 3, 4, 5), 2, 1e-3),
                                   ("batch_norm_eval_axis0", (3, 4), 0, 1e-5)):
        c = Case(name)
        x = c.input(c.normal(*shape))
        ch = shape[axis]
        g, b = 1.0 + c.normal(ch, scale=0.3), c.normal(ch, scale=0.2)
        mean, var = c.normal(ch, scale=0.5), c.uniform(0.2, 2.0, ch)
        y = c.node("batch_norm_eval", [x], shape, channel_axis=axis, channels=ch, gamma=g, beta=b, mean=mean,
                   var=var, eps=eps)
        c.expect(y, lambda T, x=x, a=axis, g=g, b=b, m=mean, v=var, e=eps:
                 torch_batch_norm(T(x), a, T(g), T(b), T(m), T(v), e))
        out.append(c)
    c = Case("hard_masked_softmax", note="fully blocked row: PyTorch gives NaN, the IR gives 0 (torch.where)")
    x = c.input(c.normal(2, 3, 4, scale=2.0))
    allowed = (c.rng.random((2, 3, 4)) < 0.6).astype(np.float64)
    allowed[0, 1, :] = 0.0      # fully blocked row
    allowed[1, 2, :] = 1.0      # fully allowed row
    allowed[1, 0, :] = [0, 0, 1, 0]
    y = c.node("hard_masked_softmax", [x], [2, 3, 4], mask_shape=[2, 3, 4], allowed=allowed.astype(np.int64))

    def masked(T, x=x, allowed=allowed):
        keep = torch.tensor(allowed != 0)
        sm = torch.softmax(T(x).masked_fill(~keep, -math.inf), dim=-1)
        return torch.where(keep, sm, torch.zeros_like(sm))
    c.expect(y, masked)
    out.append(c)
    return out


@case
def sources():
    out = []
    c = Case("const_only")
    vals = c.normal(2, 2)
    c.expect(c.node("const", [], [2, 2], value_shape=[2, 2], values=vals), lambda T: T(vals))
    out.append(c)
    stream = "independent Python splitmix64 stream (SPEC-IR.md), not PyTorch"
    c = Case("rand_uniform", note=stream)
    y = c.node("rand_uniform", [], [3, 4], seed=12345)
    c.expect_values(y, *uniform_values(12345, y, (3, 4)))
    out.append(c)
    c = Case("rand_uniform_seed_wrap", note=stream + "; seed + node id wraps mod 2^64")
    c.node("rand_uniform", [], [2], seed=7)
    y = c.node("rand_uniform", [], [2, 5], seed=MASK64)
    c.expect_values(y, *uniform_values(MASK64, y, (2, 5)))
    out.append(c)
    for name, p in (("bernoulli_mask_p03", 0.3), ("bernoulli_mask_p0", 0.0), ("bernoulli_mask_p1", 1.0),
                    ("bernoulli_mask_p_above1", 1.5)):
        c = Case(name, note=stream)
        pid = c.input(np.array(p))
        seed = 987654321
        y = c.node("bernoulli_mask", [pid], [4, 6], seed=seed)
        u64, u32 = uniform_values(seed, y, (4, 6))
        p32 = np.float32(p)
        m64 = np.zeros((4, 6)) if p <= 0 else (np.ones((4, 6)) if p >= 1 else (p > u64).astype(np.float64))
        m32 = np.zeros((4, 6)) if p32 <= 0 else (np.ones((4, 6)) if p32 >= 1 else (p32 > u32).astype(np.float64))
        c.expect_values(y, m64, m32.astype(np.float32))
        out.append(c)
    return out


@case
def composite():
    c = Case("composite_mlp_softmax")
    x = c.input(c.normal(2, 4))
    W1, b1 = c.normal(6, 4, scale=0.5), c.normal(6, scale=0.1)
    W2, b2 = c.normal(3, 6, scale=0.5), c.normal(3, scale=0.1)
    h = c.node("linear", [x], [2, 6], out_dim=6, in_dim=4, weight=W1, bias=b1)
    r = c.node("relu", [h], [2, 6])
    o = c.node("linear", [r], [2, 3], out_dim=3, in_dim=6, weight=W2, bias=b2)
    s = c.node("softmax", [o], [2, 3], axis=1)
    c.expect(s, lambda T: torch.softmax(F.linear(torch.relu(F.linear(T(x), T(W1), T(b1))), T(W2), T(b2)), dim=1))
    return [c]


# ---------------------------------------------------------------- driver
def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "data", "golden"))
    args = ap.parse_args()
    out_dir = os.path.normpath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    cases = [c for fn in CASES for c in fn()]
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    # Remove stale case directories (never the README).
    for entry in os.listdir(out_dir):
        path = os.path.join(out_dir, entry)
        if os.path.isdir(path) and os.path.exists(os.path.join(path, "model.json")):
            shutil.rmtree(path)
    total = 0
    print(f"torch {torch.__version__}, numpy {np.__version__}: {len(cases)} cases -> {out_dir}")
    for c in cases:
        f64, f32 = c.result
        d = os.path.join(out_dir, c.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.json"), "w") as fh:
            fh.write(model_json(c))
        for k, (_, arr) in enumerate(c.inputs):
            np.save(os.path.join(d, f"input_{k}.npy"), np.array(arr, dtype=np.float64, order="C"))
        np.save(os.path.join(d, "expected_f64.npy"), np.array(f64, dtype=np.float64, order="C"))
        np.save(os.path.join(d, "expected_f32.npy"), np.array(f32, dtype=np.float32, order="C"))
        size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        total += size
        src = "hand/python" if c.custom is not None else "torch"
        kinds = sorted({n["kind"] for n in c.nodes} - {"input"})
        print(f"  {c.name:32s} out={list(f64.shape)!s:14s} {src:11s} ops={','.join(kinds)}"
              + (f"  [{c.note}]" if c.note else ""))
    print(f"total {total} bytes in {len(cases)} case directories")
    if total > 2 * 1024 * 1024:
        sys.exit("golden data exceeds 2 MB")


if __name__ == "__main__":
    main()
