#!/usr/bin/env python3
"""CROWN on the VNN-COMP 2021 CNNs: `denote bounds --method crown --arith f32` timed for each binary given.

Networks (../shared/data/vnncomp2021): oval21 cifar_base/wide/deep_kw, marabou-cifar10 small/medium/large,
cifar10_resnet resnet_2b/4b, verivital Convnet_avgpool/maxpool. The input box is the X box of one VNN-LIB
file of the benchmark (shared by the nets of a benchmark). Per net and binary: the best of --repeat runs as a
process (start and ONNX load included), the mean width of the output bounds and the pass statistics, so two
binaries (before and after a change) can be compared side by side in one run:
  <net> <binary> time_s=... width=... {'passes': ..., 'rows': ..., 'alpha_steps': ...}

Usage (from the repository root; one thread):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/cnn_crown_nets.py OLD/denote build/bin/denote \
        [--data ../shared/data/vnncomp2021] [--repeat 5] [--method crown]
"""
import argparse
import json
import os
import re
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [
    ("oval21/nets/cifar_base_kw.onnx", "oval21/vnnlib/cifar_base_kw-img4549-eps0.00392156862745098.vnnlib"),
    ("oval21/nets/cifar_wide_kw.onnx", None),
    ("oval21/nets/cifar_deep_kw.onnx", None),
    ("marabou-cifar10/nets/cifar10_small.onnx",
     "marabou-cifar10/specs/networkcifar10_large_index6926_eps0.012_target8_orig7.vnnlib"),
    ("marabou-cifar10/nets/cifar10_medium.onnx", None),
    ("marabou-cifar10/nets/cifar10_large.onnx", None),
    ("cifar10_resnet/onnx/resnet_2b.onnx",
     "cifar10_resnet/vnnlib_properties_pgd_filtered/resnet2b_pgd_filtered/prop_0_eps_0.008.vnnlib"),
    ("cifar10_resnet/onnx/resnet_4b.onnx",
     "cifar10_resnet/vnnlib_properties_pgd_filtered/resnet4b_pgd_filtered/prop_0_eps_0.004.vnnlib"),
    ("verivital/Convnet_avgpool.onnx", "verivital/specs/avgpool_specs/prop_0_0.02.vnnlib"),
    ("verivital/Convnet_maxpool.onnx", "verivital/specs/maxpool_specs/prop_0_0.004.vnnlib"),
]


def input_box(path):
    """The X_i bounds of a VNN-LIB file written as (assert (<= X_i v)) / (assert (>= X_i v)) lines."""
    lo, hi = {}, {}
    with open(path) as f:
        text = f.read()
    for op, var, val in re.findall(r"\(assert \((<=|>=) X_(\d+) ([-+0-9.eE]+)\)\)", text):
        (hi if op == "<=" else lo)[int(var)] = float(val)
    n = max(lo) + 1
    return np.array([lo[i] for i in range(n)]), np.array([hi[i] for i in range(n)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "shared", "data", "vnncomp2021"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--method", default="crown")
    args = ap.parse_args()
    with open("/proc/loadavg") as f:
        print(f"cnn_crown_nets repeat={args.repeat} method={args.method} load={f.read().split()[0]}", flush=True)
    spec = None
    with tempfile.TemporaryDirectory() as tmp:
        for net, vnnlib in CASES:
            spec = vnnlib or spec
            lo, hi = input_box(os.path.join(args.data, spec))
            np.save(os.path.join(tmp, "lo.npy"), lo)
            np.save(os.path.join(tmp, "hi.npy"), hi)
            for binary in args.binaries:
                cmd = [binary, "bounds", os.path.join(args.data, net), "--box", "@" + os.path.join(tmp, "lo.npy"),
                       "@" + os.path.join(tmp, "hi.npy"), "--method", args.method, "--arith", "f32", "--json"]
                times = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
                    times.append(time.perf_counter() - t0)
                try:
                    d = json.loads(p.stdout)
                    box = d["boxes"][0]
                    width = float(np.mean(np.array(box["hi"]) - np.array(box["lo"])))
                    stats = d["stats"]
                except (ValueError, KeyError, IndexError):
                    width, stats = None, p.stderr.strip()[-200:]
                print(f"{os.path.basename(net)} {binary} time_s={min(times):.3f} width={width} {stats}", flush=True)


if __name__ == "__main__":
    main()
