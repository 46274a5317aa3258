#!/usr/bin/python3
"""PyTorch side of the gradient benchmark (bench/grad_bench.cc, bench/compare_grad.sh; issue 14).

The same five networks as bench/grad_bench.cc, in float32 and float64:
  acasxu_onnx_b1  tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx (weights read with onnx.numpy_helper):
                  x - offset (a parameter), flatten, 6 x (Linear 50, ReLU), Linear 5; input [1, 1, 1, 5]
  acas_b1         5-50x6-5 ReLU MLP, input [1, 5]
  acas_b1024      the same MLP, input [1024, 5]
  mnist_onnx_b1   tests/data/mnistfc/mnist-net_256x2.onnx: flatten, Linear 256, ReLU, Linear 256, ReLU,
                  Linear 10; input [1, 784, 1]
  mnist_b1024     784-256-256-10 ReLU MLP, input [1024, 784]
The ONNX files' MatMul+Add and Gemm(transB=1) pairs become torch.nn.Linear (addmm), as a PyTorch
user would write them. The GraphBuilder MLPs get grad_bench's own weights and inputs when --data DIR
(grad_bench --dump DIR) is given, random ones of the same shapes otherwise.

Rows, per network and dtype (seconds per call):
  forward  module(x) under torch.no_grad()
  grad_x   y = module(x); y.backward(ones) with x.requires_grad (parameters frozen): d sum(y) / d x
  grad_p   the same with the parameters requiring grad and x not (weights, biases, the ACAS Xu offset)
The cotangent `ones` is made once; before each call the accumulated .grad fields are reset to None
(inside the timed loop, as a training step does). Each row is timed with time.perf_counter over
blocks of calls sized to last at least --min-time seconds; --repeat blocks; the median and the
minimum per-call time are printed.

With --data DIR, every network's float64 gradients (input, weights, biases, offset) are first
compared with grad_bench's (relative 1e-9 of the largest entry); a mismatch exits 1.

Output: one machine-readable line per row,
  torch row=<kind>/<net>/<f32|f64> median=<s> min=<s> calls=<k> repeat=<r>

Usage: /usr/bin/python3 bench/torch_grad_bench.py [--data DIR] [--threads 1] [--repeat R] [--min-time S]
                                                  [--only SUBSTRING]
Run with Debian's python3-torch (1.13) and python3-onnx.
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np
import onnx
import torch
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACAS_ONNX = os.path.join(ROOT, "tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx")
MNIST_ONNX = os.path.join(ROOT, "tests/data/mnistfc/mnist-net_256x2.onnx")
ACAS_WIDTHS = [5, 50, 50, 50, 50, 50, 50, 5]
MNIST_WIDTHS = [784, 256, 256, 10]


class Offset(torch.nn.Module):
    """x - c, c a parameter (denote's wrt=params covers constants too)."""

    def __init__(self, c):
        super().__init__()
        self.c = torch.nn.Parameter(torch.from_numpy(c.copy()))

    def forward(self, x):
        return x - self.c


def linear(w_out_in, b):
    lin = torch.nn.Linear(w_out_in.shape[1], w_out_in.shape[0], dtype=torch.float64)
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(np.ascontiguousarray(w_out_in)))
        lin.bias.copy_(torch.from_numpy(b))
    return lin


def module_from_onnx(path):
    """A torch.nn.Sequential for a chain of Sub(const), Flatten, MatMul+Add / Gemm(transB=1), Relu."""
    g = onnx.load(path).graph
    inits = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in g.initializer}
    layers, nodes, i = [], list(g.node), 0
    while i < len(nodes):
        n = nodes[i]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "Sub" and n.input[1] in inits:
            layers.append(Offset(inits[n.input[1]]))
        elif n.op_type == "Flatten" and attrs.get("axis", 1) == 1:
            layers.append(torch.nn.Flatten())
        elif n.op_type == "Relu":
            layers.append(torch.nn.ReLU())
        elif n.op_type == "Gemm" and attrs.get("transB") == 1 and attrs.get("transA", 0) == 0:
            layers.append(linear(inits[n.input[1]], inits[n.input[2]]))
        elif n.op_type == "MatMul" and i + 1 < len(nodes) and nodes[i + 1].op_type == "Add":
            layers.append(linear(inits[n.input[1]].T, inits[nodes[i + 1].input[1]]))
            i += 1
        else:
            sys.exit(f"torch_grad_bench: {path}: unsupported node {n.op_type} {list(n.input)}")
        i += 1
    return torch.nn.Sequential(*layers)


def mlp(widths, weights=None):
    """widths[0] -> ... -> widths[-1], ReLU between; weights: [(W [out, in], b)] or None (torch's init)."""
    layers = []
    for k in range(1, len(widths)):
        if weights:
            layers.append(linear(*weights[k - 1]))
        else:
            layers.append(torch.nn.Linear(widths[k - 1], widths[k]))
        if k + 1 < len(widths):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def load(data, net, name):
    return np.load(os.path.join(data, net, name))


def networks(data):
    """(name, float64 module, float64 input)."""
    gen = torch.Generator().manual_seed(1)

    def builder_net(name, widths, batch, lo, hi):
        if data:
            weights = [(load(data, name, f"W{k}.npy"), load(data, name, f"b{k}.npy")) for k in range(len(widths) - 1)]
            return name, mlp(widths, weights).double(), torch.from_numpy(load(data, name, "x.npy"))
        x = torch.rand(batch, widths[0], generator=gen, dtype=torch.float64) * (hi - lo) + lo
        return name, mlp(widths).double(), x

    def onnx_net(name, path, shape, lo, hi):
        if data:
            x = torch.from_numpy(load(data, name, "x.npy"))
        else:
            x = torch.rand(*shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo
        return name, module_from_onnx(path).double(), x

    return [
        onnx_net("acasxu_onnx_b1", ACAS_ONNX, (1, 1, 1, 5), -0.5, 0.5),
        builder_net("acas_b1", ACAS_WIDTHS, 1, -1.0, 1.0),
        builder_net("acas_b1024", ACAS_WIDTHS, 1024, -1.0, 1.0),
        onnx_net("mnist_onnx_b1", MNIST_ONNX, (1, 784, 1), 0.0, 1.0),
        builder_net("mnist_b1024", MNIST_WIDTHS, 1024, 0.0, 1.0),
    ]


def check(name, module, x, data):
    """float64 gradients against grad_bench --dump's; exits on a mismatch."""
    params = [p for p in module.parameters()]
    xr = x.clone().requires_grad_(True)
    y = module(xr)
    grads = torch.autograd.grad(y, [xr] + params, torch.ones_like(y))
    want = {"grad_x": load(data, name, "grad_x.npy")}
    got = {"grad_x": grads[0]}
    layer, consts = 0, 0
    for m in module:
        if isinstance(m, torch.nn.Linear):
            want[f"grad_w{layer}"] = load(data, name, f"grad_w{layer}.npy")
            want[f"grad_b{layer}"] = load(data, name, f"grad_b{layer}.npy")
            got[f"grad_w{layer}"] = m.weight
            got[f"grad_b{layer}"] = m.bias
            layer += 1
        elif isinstance(m, Offset):
            want[f"grad_const{consts}"] = load(data, name, f"grad_const{consts}.npy")
            got[f"grad_const{consts}"] = m.c
            consts += 1
    by_param = {id(p): g for p, g in zip(params, grads[1:])}
    worst = 0.0
    for key, w in want.items():
        g = got[key] if key == "grad_x" else by_param[id(got[key])]
        g = g.detach().numpy().reshape(w.shape)
        err = float(np.max(np.abs(g - w))) / max(float(np.max(np.abs(w))), 1e-300)
        worst = max(worst, err)
        if err > 1e-9:
            sys.exit(f"torch_grad_bench: {name}: {key} differs from grad_bench's: relative {err:.3g}")
    print(f"# check {name}: {len(want)} gradients agree with grad_bench's (max relative {worst:.2g})", flush=True)


def make_call(kind, module, x):
    """A zero-argument callable doing one call of row `kind`."""
    params = list(module.parameters())
    if kind == "forward":
        for p in params:
            p.requires_grad_(False)

        def call():
            with torch.no_grad():
                module(x)
        return call
    ones = torch.ones_like(module(x))
    if kind == "grad_x":
        for p in params:
            p.requires_grad_(False)
        xr = x.clone().requires_grad_(True)

        def call():
            xr.grad = None
            module(xr).backward(ones)
        return call
    for p in params:
        p.requires_grad_(True)

    def call():
        for p in params:
            p.grad = None
        module(x).backward(ones)
    return call


def time_block(call, calls):
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return time.perf_counter() - start


def per_call_times(call, repeat, min_time):
    """Sizes a block to last >= min_time, then returns the per-call times of `repeat` blocks."""
    time_block(call, 3)  # warm-up: allocator, autograd engine thread
    calls = 1
    while True:
        elapsed = time_block(call, calls)
        if elapsed >= min_time:
            break
        calls = max(calls * 2, int(calls * min_time / max(elapsed, 1e-9) * 1.2))
    return [time_block(call, calls) / calls for _ in range(repeat)], calls


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="", help="grad_bench --dump DIR: the same weights, inputs, a check")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    parser.add_argument("--repeat", type=int, default=15, help="timed blocks per row; median and min printed")
    parser.add_argument("--min-time", type=float, default=0.05, help="seconds per timed block")
    parser.add_argument("--only", default="", help="run only rows whose name contains this")
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    print(f"# torch {torch.__version__}, threads={torch.get_num_threads()}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}", flush=True)
    for name, module, x in networks(args.data):
        if args.data:
            check(name, module, x, args.data)
        for tag, dtype in (("f32", torch.float32), ("f64", torch.float64)):
            m = module.to(dtype)
            xd = x.to(dtype)
            for kind in ("forward", "grad_x", "grad_p"):
                row = f"{kind}/{name}/{tag}"
                if args.only and args.only not in row:
                    continue
                times, calls = per_call_times(make_call(kind, m, xd), args.repeat, args.min_time)
                print(f"torch row={row} median={statistics.median(times):.9g} min={min(times):.9g} "
                      f"calls={calls} repeat={args.repeat}", flush=True)
            module = m.double()


if __name__ == "__main__":
    main()
