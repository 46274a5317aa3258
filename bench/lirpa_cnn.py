#!/usr/bin/env python3
"""CROWN (and IBP, alpha-CROWN) on small CIFAR CNNs: auto_LiRPA and denote's CLI side by side.

Networks (random weights, torch.manual_seed(0); input [1, 3, 32, 32] uniform in [0, 1), box +-eps):
  cnn_8_16    conv(3->8, k4, s2, p1) relu conv(8->16, k4, s2, p1) relu flatten fc(1024->100) relu fc(100->10)
  cnn_16_32   the same with 16 and 32 channels (fc 2048->100)
Each is exported to ONNX; auto_LiRPA 0.7.1 bounds the torch module (float32, one compute_bounds call on a
built BoundedModule: no build time), denote runs `denote bounds NET.onnx --box @lo.npy @hi.npy --method M
--arith f32 --json` as a process (its time includes process start and the ONNX load; the IBP row shows
that fixed cost) and, with --python DIR, `Model.bounds` of denote's Python module in this process (the
model loaded once: the same scope as auto_LiRPA's). Median of --repeat runs after one warm-up. One line
per (side, method, net):
  <side> method=<M> net=<net> time_s=... mean_width=...

Usage (from the repository root, Debian's python3-torch + python3-onnx; 1 thread each side):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/lirpa_cnn.py \
        --denote build/bin/denote [--denote OTHER/denote ...] [--python build/python] [--methods IBP,CROWN]
        [--repeat 3] [--eps 0.00784]
        [--no-lirpa] [--keep DIR]
"""
import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
DENOTE_METHOD = {"IBP": "ibp", "CROWN": "crown", "alpha-CROWN": "alpha-crown"}


def make_net(torch, c1, c2):
    nn = torch.nn
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, c1, 4, stride=2, padding=1), nn.ReLU(),
                         nn.Conv2d(c1, c2, 4, stride=2, padding=1), nn.ReLU(), nn.Flatten(),
                         nn.Linear(c2 * 8 * 8, 100), nn.ReLU(), nn.Linear(100, 10)).eval()


def time_lirpa(torch, model, center, lo, hi, method, repeat):
    from auto_LiRPA import BoundedModule, BoundedTensor
    from auto_LiRPA.perturbations import PerturbationLpNorm
    bm = BoundedModule(model, torch.zeros_like(center), device="cpu")
    times, result = [], None
    for run in range(repeat + 1):
        x = BoundedTensor(center, PerturbationLpNorm(norm=float("inf"), x_L=lo, x_U=hi))
        with contextlib.redirect_stdout(io.StringIO()):
            t0 = time.perf_counter()
            if method == "IBP":
                with torch.no_grad():
                    lb, ub = bm.compute_bounds(x=(x,), method=method)
            else:
                lb, ub = bm.compute_bounds(x=(x,), method=method)
            t1 = time.perf_counter()
        if run:
            times.append(t1 - t0)
        result = (lb.detach().reshape(-1).tolist(), ub.detach().reshape(-1).tolist())
    return statistics.median(times), result


def time_denote(binary, onnx_path, lo_path, hi_path, method, repeat):
    cmd = [binary, "bounds", onnx_path, "--box", "@" + lo_path, "@" + hi_path, "--method", DENOTE_METHOD[method],
           "--arith", "f32", "--json"]
    times, out = [], None
    for run in range(repeat + 1):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        t1 = time.perf_counter()
        if p.returncode != 0:
            sys.exit(f"lirpa_cnn: {' '.join(cmd)} failed: {p.stderr.strip()}")
        if run:
            times.append(t1 - t0)
        out = json.loads(p.stdout)
    box = [b for b in out["boxes"] if b.get("output", True)][-1]
    return statistics.median(times), (box["lo"], box["hi"])


def time_python(module_dir, onnx_path, lo, hi, method, repeat, tune):
    """denote's Python module in this process: Model.bounds on the loaded model (no start, no load)."""
    sys.path.insert(0, os.path.abspath(module_dir))
    import denote
    if tune:
        denote.tune_allocator()
    model = denote.load(onnx_path)
    times, result = [], None
    for run in range(repeat + 1):
        t0 = time.perf_counter()
        result = model.bounds(lo, hi, method=DENOTE_METHOD[method], arith="f32")
        t1 = time.perf_counter()
        if run:
            times.append(t1 - t0)
    return statistics.median(times), (result[0].reshape(-1).tolist(), result[1].reshape(-1).tolist())


def mean_width(lohi):
    lo, hi = lohi
    return sum(h - l for l, h in zip(lo, hi)) / len(lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lirpa", default=os.path.join(ROOT, "..", "shared", "peers", "auto_LiRPA"))
    ap.add_argument("--denote", action="append", default=[], help="a denote CLI binary (repeatable)")
    ap.add_argument("--methods", default="IBP,CROWN")
    ap.add_argument("--nets", default="cnn_8_16,cnn_16_32")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--eps", type=float, default=2 / 255)
    ap.add_argument("--python", help="also denote's Python module from this directory (build/python), in process")
    ap.add_argument("--tune", action="store_true", help="--python: call denote.tune_allocator() first (as the CLI "
                    "does; process-wide, and it stays for the auto_LiRPA rows after it)")
    ap.add_argument("--no-lirpa", action="store_true")
    ap.add_argument("--keep", help="write the ONNX files and boxes here (default: a temporary directory)")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.lirpa))
    import numpy as np
    import torch
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    channels = {"cnn_8_16": (8, 16), "cnn_16_32": (16, 32)}
    with open("/proc/loadavg") as f:
        print(f"lirpa_cnn torch={torch.__version__} threads=1 repeat={args.repeat} eps={args.eps:.6g} "
              f"load={f.read().split()[0]}", flush=True)
    with (contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory()) as tmp:
        for net in args.nets.split(","):
            model = make_net(torch, *channels[net])
            torch.manual_seed(1)
            center = torch.rand(1, 3, 32, 32)
            lo, hi = center - args.eps, center + args.eps
            onnx_path = os.path.join(tmp, net + ".onnx")
            torch.onnx.export(model, center, onnx_path, opset_version=13)
            lo_path, hi_path = os.path.join(tmp, net + "_lo.npy"), os.path.join(tmp, net + "_hi.npy")
            np.save(lo_path, lo.numpy().astype(np.float64))
            np.save(hi_path, hi.numpy().astype(np.float64))
            for method in args.methods.split(","):
                if not args.no_lirpa:
                    t, r = time_lirpa(torch, model, center, lo, hi, method, args.repeat)
                    print(f"auto_LiRPA method={method} net={net} time_s={t:.4f} mean_width={mean_width(r):.6f}",
                          flush=True)
                if args.python:
                    t, r = time_python(args.python, onnx_path, lo.numpy().astype(np.float64),
                                       hi.numpy().astype(np.float64), method, args.repeat, args.tune)
                    side = "python,tuned" if args.tune else "python"
                    print(f"denote({side}) method={method} net={net} time_s={t:.4f} mean_width={mean_width(r):.6f}",
                          flush=True)
                for binary in args.denote:
                    t, r = time_denote(binary, onnx_path, lo_path, hi_path, method, args.repeat)
                    print(f"denote({binary}) method={method} net={net} time_s={t:.4f} mean_width={mean_width(r):.6f}",
                          flush=True)


if __name__ == "__main__":
    main()
