#!/usr/bin/env python3
"""from_torch against ONNX export + load, side by side in one process (issue 51's benchmark: a 4.2M-parameter
MLP captured within 2x of torch.onnx.export + denote.load). Also the JSON-text path (capture_json, then
loads) that from_torch took before its parameters went as arrays. Best of --repeat runs each.
Usage: PYTHONPATH=build/python /usr/bin/python3 bench/capture_bench.py [--repeat 3]"""
import argparse
import os
import tempfile
import time

import torch
import torch.nn as nn

import denote
import denote.torch_capture as TC


def best(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 1024), nn.ReLU(), nn.Linear(1024, 10)).eval()
    x = torch.randn(1, 1024)
    n = sum(p.numel() for p in m.parameters())
    capture = best(lambda: denote.from_torch(m, (x,)), a.repeat)
    text = best(lambda: denote.loads(TC.capture_json(m, (x,))), 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        onnx = best(lambda: (torch.onnx.export(m, (x,), path), denote.load(path)), a.repeat)
    print(f"{n} parameters: from_torch {capture:.3f} s; torch.onnx.export + denote.load {onnx:.3f} s "
          f"(ratio {capture / onnx:.2f}); capture_json + loads (JSON text) {text:.2f} s")


if __name__ == "__main__":
    main()
