#!/usr/bin/env python3
"""max_pool's linear relaxation (issue 50): IBP and CROWN on VNN-COMP 2021 verivital Convnet_maxpool
(conv 1->32 k2 -> relu -> max_pool 4x4 s4 -> flatten -> gemm 1152->10), auto_LiRPA and denote side by side.

The torch module is rebuilt from the ONNX file's weights (float32) for auto_LiRPA 0.7.1 (one compute_bounds
call on a built BoundedModule, 1 thread); denote runs `denote bounds MODEL --box @lo.npy @hi.npy --method M
--arith f32 --json` as a process (its time includes process start and the ONNX load: the IBP row shows that
fixed cost). Box: the input box of a --vnnlib file (default: verivital maxpool prop_0_0.004, an MNIST
image +- 0.004), or with --eps E the box 0.5 +- E. Median of --repeat runs
after a warm-up. One line per (side, method): `<side> method=<M> time_s=... mean_width=... max_width=...`.

Usage (from the repository root; Debian's python3-torch + python3-onnx):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/lirpa_maxpool.py \
        [--model ../shared/data/vnncomp2021/verivital/Convnet_maxpool.onnx] [--vnnlib P | --eps E] [--repeat 3]
        [--no-lirpa]
"""
import argparse
import contextlib
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def vnnlib_box(path, n):
    lo, hi = np.full(n, np.nan), np.full(n, np.nan)
    for op, i, v in re.findall(r"\(assert \((<=|>=) X_(\d+) ([-+0-9.eE]+)\)\)", open(path).read()):
        (hi if op == "<=" else lo)[int(i)] = float(v)
    assert not np.isnan(lo).any() and not np.isnan(hi).any(), "every X_i needs both bounds"
    return lo.reshape(1, 1, 28, 28), hi.reshape(1, 1, 28, 28)


def torch_module(path):
    import torch
    w = {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    conv = torch.nn.Conv2d(1, 32, 2)
    conv.weight.data = torch.tensor(w["conv1.0.weight"])
    conv.bias.data = torch.tensor(w["conv1.0.bias"])
    fc = torch.nn.Linear(1152, 10)
    fc.weight.data = torch.tensor(w["out.weight"])
    fc.bias.data = torch.tensor(w["out.bias"])
    return torch.nn.Sequential(conv, torch.nn.ReLU(), torch.nn.MaxPool2d(4, 4), torch.nn.Flatten(), fc).eval()


def widths(lo, hi):
    d = np.asarray(hi, dtype=np.float64) - np.asarray(lo, dtype=np.float64)
    return float(d.mean()), float(d.max())


def timed(f, repeat):
    f()
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def run_lirpa(args, lo, hi):
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, os.path.abspath(args.lirpa))
    from auto_LiRPA import BoundedModule, BoundedTensor
    from auto_LiRPA.perturbations import PerturbationLpNorm
    model = torch_module(args.model)
    x0 = torch.tensor((lo + hi) / 2, dtype=torch.float32)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        bm = BoundedModule(model, torch.zeros_like(x0))
    ptb = PerturbationLpNorm(x_L=torch.tensor(lo, dtype=torch.float32), x_U=torch.tensor(hi, dtype=torch.float32))
    x = BoundedTensor(x0, ptb)
    for method in args.methods:
        def once():
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                if method == "IBP":
                    with torch.no_grad():
                        return bm.compute_bounds(x=(x,), method="IBP")
                return bm.compute_bounds(x=(x,), method=method)
        t, (l, h) = timed(once, args.repeat)
        mean, mx = widths(l.detach().numpy(), h.detach().numpy())
        print(f"lirpa method={method} time_s={t:.4f} mean_width={mean:.6f} max_width={mx:.6f}", flush=True)


def run_denote(args, lo, hi, tmp):
    np.save(os.path.join(tmp, "lo.npy"), lo)
    np.save(os.path.join(tmp, "hi.npy"), hi)
    for method in args.methods:
        cmd = [args.denote, "bounds", args.model, "--box", "@" + os.path.join(tmp, "lo.npy"),
               "@" + os.path.join(tmp, "hi.npy"), "--method", method.lower(), "--arith", "f32", "--json"]
        t, out = timed(lambda: subprocess.run(cmd, check=True, capture_output=True, text=True).stdout, args.repeat)
        node = json.loads(out)["boxes"][-1]
        mean, mx = widths(node["lo"], node["hi"])
        print(f"denote method={method} time_s={t:.4f} mean_width={mean:.6f} max_width={mx:.6f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "..", "shared", "data", "vnncomp2021", "verivital",
                                                    "Convnet_maxpool.onnx"))
    ap.add_argument("--denote", default=os.path.join(ROOT, "build", "bin", "denote"))
    ap.add_argument("--lirpa", default=os.path.join(ROOT, "..", "shared", "peers", "auto_LiRPA"))
    ap.add_argument("--vnnlib", default=os.path.join(ROOT, "..", "shared", "data", "vnncomp2021", "verivital", "specs",
                                                     "maxpool_specs", "prop_0_0.004.vnnlib"))
    ap.add_argument("--eps", type=float, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--methods", default="IBP,CROWN")
    ap.add_argument("--no-lirpa", action="store_true")
    args = ap.parse_args()
    args.methods = args.methods.split(",")
    if args.eps is not None:
        lo = np.full((1, 1, 28, 28), 0.5 - args.eps, dtype=np.float32)
        hi = np.full((1, 1, 28, 28), 0.5 + args.eps, dtype=np.float32)
    else:  # the property's box in float32 (both sides bound the same float32 box)
        lo, hi = vnnlib_box(args.vnnlib, 784)
        lo = lo.astype(np.float32)
        hi = hi.astype(np.float32)
    print(f"box: {os.path.basename(args.vnnlib) if args.eps is None else 'eps %g' % args.eps}, "
          f"mean width {float((hi - lo).mean()):.6f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        run_denote(args, lo.astype(np.float64), hi.astype(np.float64), tmp)
    if not args.no_lirpa:
        run_lirpa(args, lo, hi)


if __name__ == "__main__":
    main()
