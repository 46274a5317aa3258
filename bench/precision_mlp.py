#!/usr/bin/python3
"""Mixed precision and OCP MX on the mnistfc 784-256-256-10 MLP (trained weights) at batch 256, per call,
through the Python module (issue 53): float32 (the evaluator and the compiled plan), bfloat16 throughout,
bfloat16 with binary32 accumulation (the precision policy, torch's CPU semantics; and torch's own bfloat16
module on the same weights), and the MX formats (linear layers on MX operands). Then mx_quantize's
throughput. One thread (OMP/OpenBLAS), denote.tune_allocator() on (its documented throughput setting).
Prints the best of --repeat calls in each of --rounds rounds, alternating the arithmetics, with ratios to
f32 and the machine and load.

Usage: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=build/python /usr/bin/python3 bench/precision_mlp.py
       [--batch N] [--repeat N] [--rounds N] [--no-torch]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

import denote

HERE = os.path.dirname(os.path.abspath(__file__))
ONNX = os.path.join(HERE, "..", "..", "shared", "data", "mnistfc", "mnist-net_256x2.onnx")


def cpu():
    try:
        with open("/proc/cpuinfo") as f:
            name = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
        flags = open("/proc/cpuinfo").read()
        simd = [x for x in ("avx512f", "avx2", "fma") if f" {x} " in flags or f" {x}\n" in flags]
        return f"{name} ({', '.join(simd)}), load {os.getloadavg()[0]:.2f}"
    except (OSError, StopIteration):
        return platform.processor()


def best(fn, repeat):
    fn()
    t = []
    for _ in range(repeat):
        s = time.perf_counter()
        fn()
        t.append(time.perf_counter() - s)
    return min(t)


def cnn(repeat):
    """A CIFAR-sized CNN (conv 3->32 k3 p1, conv 32->64 k4 s2 p1, linear) at batch 32, random weights: f32
    against the MX arithmetics (conv on MX operands, blocks along the input channels)."""
    rng = np.random.default_rng(0)
    b = denote.GraphBuilder()
    x = b.input([32, 3, 32, 32])
    conv = dict(spatial_rank=2, channel_axis=1)
    h = b.op("relu", b.conv(x, rng.standard_normal((32, 3, 3, 3)) * 0.2, np.zeros(32), kernel=[3, 3], stride=[1, 1],
                            padding=[1, 1], in_channels=3, out_channels=32, **conv))
    h = b.op("relu", b.conv(h, rng.standard_normal((64, 32, 4, 4)) * 0.05, np.zeros(64), kernel=[4, 4], stride=[2, 2],
                            padding=[1, 1], in_channels=32, out_channels=64, **conv))
    y = b.linear(b.op("reshape", h, in_shape=[32, 64, 16, 16], out_shape=[32, 64 * 256]),
                 rng.standard_normal((10, 64 * 256)) * 0.01, np.zeros(10))
    m = b.build(y)
    X = rng.standard_normal((32, 3, 32, 32))
    f32 = best(lambda: m.run(X, arith="f32", provider="evaluator"), repeat)
    fast = best(lambda: m.run(X, arith="f32"), repeat)
    print(f"CNN conv(3->32,k3)-conv(32->64,k4,s2)-fc10, batch 32: f32 evaluator {f32 * 1e3:.1f} ms, "
          f"f32 default (compiled plan) {fast * 1e3:.1f} ms")
    for f in ("mxfp8_e4m3", "mxfp4_e2m1", "mxint8"):
        t = best(lambda f=f: m.run(X, arith=f), repeat)
        print(f"  {f:36s} {t * 1e3:9.2f} ms   {t / f32:6.2f}x f32 evaluator   {t / fast:6.2f}x f32 default")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    denote.tune_allocator()
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, os.path.join(HERE, "mnist_mlp_json.py"), ONNX, str(a.batch),
                        os.path.join(d, "m.json"), os.path.join(d, "x.npy")], check=True)
        m = denote.load(os.path.join(d, "m.json"))
        x = np.load(os.path.join(d, "x.npy"))
    runs = {
        "f32 (evaluator)": lambda: m.run(x, arith="f32", provider="evaluator"),
        "f32 (compiled plan, auto: run's default)": lambda: m.run(x, arith="f32"),
        "bfloat16 throughout": lambda: m.run(x, arith="bfloat16"),
        "bfloat16 + binary32 accumulation": lambda: m.run(x, arith="bfloat16", accumulate="binary32"),
    }
    for f in ("mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp4_e2m1", "mxint8", "mxfp8_e4m3,scale=tensor"):
        runs[f] = (lambda f=f: m.run(x, arith=f))
    if not a.no_torch:
        try:
            import torch
            torch.set_num_threads(1)
            lin = [n for n in json.loads(m.to_json())["nodes"] if n["kind"] == "linear"]
            net = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                      torch.nn.ReLU(), torch.nn.Linear(256, 10))
            with torch.no_grad():
                for layer, n in zip([net[0], net[2], net[4]], lin):
                    layer.weight.copy_(torch.tensor(np.array(n["weight"])))
                    layer.bias.copy_(torch.tensor(np.array(n["bias"])))
            nb, xb = net.to(torch.bfloat16), torch.tensor(x).to(torch.bfloat16)
            want = nb(xb).float().detach().numpy()
            same = np.array_equal(m.run(x, arith="bfloat16", accumulate="binary32"), want)
            print(f"torch bfloat16 module == denote policy: {same}")

            def torch_run():
                with torch.no_grad():
                    nb(xb)
            runs["torch bfloat16 module (1 thread)"] = torch_run
        except ImportError:
            pass
    times = {k: [] for k in runs}
    for _ in range(a.rounds):
        for k, fn in runs.items():
            times[k].append(best(fn, a.repeat))
    print(f"mnistfc 784-256-256-10, batch {a.batch}; {cpu()}")
    f32 = min(times["f32 (evaluator)"])
    fast = min(times["f32 (compiled plan, auto: run's default)"])
    for k, t in times.items():
        print(f"  {k:40s} {min(t) * 1e3:9.2f} ms   {min(t) / f32:6.2f}x f32 evaluator   {min(t) / fast:6.2f}x f32 default")
    cnn(a.repeat)
    v = np.random.default_rng(0).standard_normal(1 << 20)
    for f in ("mxfp8_e4m3", "mxfp4_e2m1", "mxint8"):
        t = best(lambda f=f: denote.mx_quantize(v, f), a.repeat)
        print(f"  mx_quantize {f:12s} 2^20 float64: {t * 1e3:7.2f} ms ({len(v) / t / 1e6:6.1f} M elements/s)")


if __name__ == "__main__":
    main()
