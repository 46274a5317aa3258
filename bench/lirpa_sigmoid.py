#!/usr/bin/env python3
"""CROWN and alpha-CROWN on sigmoid / tanh MLPs (issue 50's "alpha-CROWN leaves tanh/sigmoid slopes
unoptimised"): auto_LiRPA and denote side by side on VNN-COMP 2021 eran's ffnnSIGMOID__Point_6x200
((x - 0.1307) / 0.3081, flatten, six Gemm + sigmoid layers of 200, a Gemm to 10) over a VNN-LIB box.

Both sides in this process, 1 thread: auto_LiRPA 0.7.1 on the torch module rebuilt from the ONNX weights
(float32; one compute_bounds per method on a built BoundedModule), denote through its Python module
(`Model.bounds(lo, hi, method=M, arith="f32")`, the same float32 network; no process start or load in the
time). Median of --repeat runs after a warm-up. Prints per (side, method): time, the mean width of the 10
outputs, the mean width of the last hidden layer's pre-activation box (denote's all_nodes, auto_LiRPA's node
bounds), and both sides' output 0 interval. The sampled range of output 0 (256 random points) is printed
to show the bounds hold.

Usage (from the repository root, after the build; Debian's python3-torch + python3-onnx):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/lirpa_sigmoid.py \
        [--model M.onnx] [--vnnlib P] [--repeat 3] [--no-lirpa]
"""
import argparse
import contextlib
import io
import os
import re
import statistics
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DATA = os.path.join(ROOT, "..", "shared", "data", "vnncomp2021", "eran")


def vnnlib_box(path, n):
    lo, hi = np.full(n, np.nan), np.full(n, np.nan)
    for op, i, v in re.findall(r"\(assert \((<=|>=) X_(\d+) ([-+0-9.eE]+)\)\)", open(path).read()):
        (hi if op == "<=" else lo)[int(i)] = float(v)
    assert not np.isnan(lo).any() and not np.isnan(hi).any(), "every X_i needs both bounds"
    return lo, hi


def torch_model(path):
    import torch
    m = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    consts = [float(numpy_helper.to_array(n.attribute[0].t).ravel()[0]) for n in m.graph.node if n.op_type == "Constant"]
    layers = [torch.nn.Flatten()]
    for n in m.graph.node:
        if n.op_type == "Gemm":
            w, b = inits[n.input[1]], inits[n.input[2]]
            lin = torch.nn.Linear(w.shape[1], w.shape[0])
            lin.weight.data, lin.bias.data = torch.tensor(w), torch.tensor(b)
            layers.append(lin)
        elif n.op_type in ("Sigmoid", "Tanh", "Relu"):
            layers.append({"Sigmoid": torch.nn.Sigmoid, "Tanh": torch.nn.Tanh, "Relu": torch.nn.ReLU}[n.op_type]())
    mean, std = (consts + [0.0, 1.0])[:2]

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = torch.nn.Sequential(*layers)

        def forward(self, x):
            return self.seq((x - mean) / std)

    return Net()


def timed(fn, repeat):
    fn()
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(DATA, "nets", "ffnnSIGMOID__Point_6x200.onnx"))
    ap.add_argument("--vnnlib", default=os.path.join(DATA, "specs", "mnist", "mnist_spec_idx_7167_eps_0.01200.vnnlib"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-lirpa", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    import denote
    m = denote.load(a.model)
    shape = m.input_shapes[0]
    lo, hi = vnnlib_box(a.vnnlib, int(np.prod(shape)))
    L, H = lo.reshape(shape), hi.reshape(shape)
    rng = np.random.default_rng(0)
    ys = []
    for _ in range(256):
        r = m.run(L + (H - L) * rng.random(L.shape))
        ys.append(float(np.asarray(r[0] if isinstance(r, (list, tuple)) else r).ravel()[0]))
    print(f"sampled output 0: [{min(ys):.4f}, {max(ys):.4f}] (256 points)")
    for method in ("crown", "alpha-crown"):
        t, (blo, bhi) = timed(lambda: m.bounds(L, H, method=method, arith="f32"), a.repeat)
        allb = m.bounds(L, H, method=method, arith="f32", all_nodes=True)
        lin = sorted(k for k in allb if isinstance(m.nodes[k], dict) and m.nodes[k].get("op") == "linear")
        inner = float(np.mean(allb[lin[-2]][1] - allb[lin[-2]][0])) if len(lin) > 1 else float("nan")
        print(f"denote method={method} time_s={t:.3f} mean_width={float(np.mean(bhi - blo)):.4f} "
              f"last_hidden_width={inner:.4f} out0=[{float(blo.ravel()[0]):.4f}, {float(bhi.ravel()[0]):.4f}]")
    if a.no_lirpa:
        return
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, os.path.join(ROOT, "..", "shared", "peers", "auto_LiRPA"))
    with contextlib.redirect_stderr(io.StringIO()):
        from auto_LiRPA import BoundedModule, BoundedTensor, PerturbationLpNorm
        net = torch_model(a.model)
        tl = torch.tensor(L, dtype=torch.float32)
        th = torch.tensor(H, dtype=torch.float32)
        x = (tl + th) / 2
        bm = BoundedModule(net, torch.zeros_like(x), verbose=False)
    bt = BoundedTensor(x, PerturbationLpNorm(x_L=tl, x_U=th))
    for method in ("CROWN", "alpha-CROWN"):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            t, (blo, bhi) = timed(lambda: bm.compute_bounds(x=(bt,), method=method), a.repeat)
        lins = [n for n in bm.nodes() if type(n).__name__ == "BoundLinear" and n.lower is not None]
        inner = float((lins[-2].upper - lins[-2].lower).mean()) if len(lins) > 1 else float("nan")
        blo, bhi = blo.detach().numpy(), bhi.detach().numpy()
        print(f"auto_LiRPA method={method} time_s={t:.3f} mean_width={float(np.mean(bhi - blo)):.4f} "
              f"last_hidden_width={inner:.4f} out0=[{float(blo.ravel()[0]):.4f}, {float(bhi.ravel()[0]):.4f}]")


if __name__ == "__main__":
    main()
