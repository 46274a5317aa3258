#!/usr/bin/python3
"""`denote bench` with no --provider (the `auto` plan: fastest provider per op) against
`--provider evaluator` (the generic evaluator, the default before issue 51) and PyTorch, one thread
each, in one run: bench/torch_bench.py's workloads (mlp_b1, mlp_b1024, cnn_b64; float32, random
weights), captured with denote.from_torch and saved as ONNX.

Usage: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=build/python \\
       /usr/bin/python3 bench/default_provider.py [--denote build/bin/denote] [--repeat 5]
Prints one line per workload: seconds per call of each side and PyTorch time / denote time.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_bench  # noqa: E402  (the same workloads)

import denote  # noqa: E402


def torch_time(model, x, repeat, min_time=0.2):
    best = float("inf")
    with torch.no_grad():
        model(x)
        for _ in range(repeat):
            calls, t0 = 0, time.perf_counter()
            while True:
                model(x)
                calls += 1
                if time.perf_counter() - t0 >= min_time:
                    break
            best = min(best, (time.perf_counter() - t0) / calls)
    return best


def denote_time(cli, path, xpath, extra, repeat, calls):
    best = float("inf")
    for _ in range(repeat):
        out = subprocess.run([cli, "bench", path, "--input", "@" + xpath, "--arith", "f32", "--repeat", str(calls),
                              "--warmup", "2", "--json"] + extra, capture_output=True, text=True, check=True).stdout
        doc = json.loads(out)
        best = min(best, doc["min_s"])
    return best, doc["engine"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--denote", default="build/bin/denote")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    mlp = torch_bench.make_mlp().eval()
    workloads = [("mlp_b1", mlp, torch.randn(torch_bench.MLP_IN), 2000),
                 ("mlp_b1024", mlp, torch.randn(1024, torch_bench.MLP_IN), 200),
                 ("cnn_b64", torch_bench.SmallCnn(64).eval(), torch.randn(64, 1, 28, 28), 10)]
    with tempfile.TemporaryDirectory() as d:
        for name, model, x, calls in workloads:
            path, xpath = os.path.join(d, name + ".onnx"), os.path.join(d, name + ".npy")
            denote.from_torch(model, (x,)).to_onnx(path)
            np.save(xpath, x.numpy())
            t_torch = torch_time(model, x, a.repeat)
            t_auto, engine = denote_time(a.denote, path, xpath, [], a.repeat, calls)
            t_eval, _ = denote_time(a.denote, path, xpath, ["--provider", "evaluator"], a.repeat, calls)
            print(f"{name}: default ({engine}) {t_auto * 1e6:.1f} us, evaluator {t_eval * 1e6:.1f} us, "
                  f"PyTorch {t_torch * 1e6:.1f} us; PyTorch/default {t_torch / t_auto:.2f}x, "
                  f"PyTorch/evaluator {t_torch / t_eval:.2f}x", flush=True)


if __name__ == "__main__":
    main()
