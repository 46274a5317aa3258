#!/usr/bin/env python3
"""IBP, CROWN and alpha-CROWN on the VNN-COMP 2021 CNNs: auto_LiRPA and denote side by side, in one process.

Networks and boxes: bench/cnn_crown_nets.py's CASES (oval21 base/wide/deep, marabou-cifar10 small/medium/
large, cifar10_resnet resnet_2b/4b, verivital avg-pool/max-pool), each box the X box of one VNN-LIB file.
auto_LiRPA 0.7.1 (../shared/peers/auto_LiRPA) bounds the torch module that alpha-beta-CROWN's own ONNX
converter makes (../shared/peers/alpha-beta-CROWN/shims/onnx2pytorch, `ConvertModel(experimental=True)`, as
its load_model_onnx does), float32, one `compute_bounds` on a built BoundedModule (no build time;
alpha-CROWN: its defaults, 20 iterations). denote's Python module bounds the same ONNX file loaded once
(`denote.load`, `Model.bounds(lo, hi, method, arith)`): f32 (bounds that hold for the float32 evaluation)
and f64. Median of --repeat runs after one warm-up; one thread each side. One line per (side, method, net):
  <side> method=<M> net=<net> time_s=... mean_width=...
(mean width of the 10 output bounds; auto_LiRPA's float32 bounds do not claim to enclose the float32
evaluation, denote's f32 ones do).

Usage (from the repository root; Debian's python3-torch + python3-onnx):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/lirpa_vnncomp_nets.py --python build/python \
        [--nets resnet_2b,cifar_base_kw] [--methods IBP,CROWN,alpha-CROWN] [--repeat 3] [--arith f32,f64]
"""
import argparse
import os
import statistics
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
PEERS = os.path.join(ROOT, "..", "shared", "peers")
DENOTE_METHOD = {"IBP": "ibp", "CROWN": "crown", "alpha-CROWN": "alpha-crown"}

sys.path.insert(0, HERE)
from cnn_crown_nets import CASES, input_box  # noqa: E402
from lirpa_cnn import mean_width, time_lirpa  # noqa: E402


def lirpa_model(torch, onnx_path):
    import onnx
    import onnx2pytorch
    m = onnx2pytorch.ConvertModel(onnx.load(onnx_path), experimental=True)
    return m.eval().to(dtype=torch.float32)


def torch_box(torch, model, lo, hi):
    """The box as the converted module takes it: the ONNX input's layout, or NCHW where the ONNX file
    takes NHWC and transposes inside (marabou-cifar10: alpha-beta-CROWN loads those with its own loader,
    and onnx2pytorch's module takes the transposed input). The same elements either way."""
    tl, th = torch.tensor(lo, dtype=torch.float32), torch.tensor(hi, dtype=torch.float32)
    for perm in (None, (0, 3, 1, 2)):
        a, b = (tl, th) if perm is None else (tl.permute(*perm).contiguous(), th.permute(*perm).contiguous())
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model((a + b) / 2)
            return a, b
        except RuntimeError:
            if tl.dim() != 4:
                break
    return None, None


def time_denote(model, lo, hi, method, arith, repeat):
    times, result = [], None
    for run in range(repeat + 1):
        t0 = time.perf_counter()
        result = model.bounds(lo, hi, method=DENOTE_METHOD[method], arith=arith)
        t1 = time.perf_counter()
        if run:
            times.append(t1 - t0)
    return statistics.median(times), (result[0].reshape(-1).tolist(), result[1].reshape(-1).tolist())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=os.path.join(ROOT, "build", "python"), help="denote's Python module directory")
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "vnncomp2021"))
    ap.add_argument("--nets", default="", help="comma-separated net names (file names without .onnx); default: all")
    ap.add_argument("--methods", default="IBP,CROWN,alpha-CROWN")
    ap.add_argument("--arith", default="f32,f64", help="denote's arithmetics")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-lirpa", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(PEERS, "auto_LiRPA"))
    sys.path.insert(0, os.path.join(PEERS, "alpha-beta-CROWN", "shims"))
    sys.path.insert(0, os.path.abspath(args.python))
    import numpy as np
    import torch
    import denote
    torch.set_num_threads(1)
    denote.tune_allocator()
    wanted = set(filter(None, args.nets.split(",")))
    with open("/proc/loadavg") as f:
        print(f"lirpa_vnncomp_nets torch={torch.__version__} threads=1 repeat={args.repeat} "
              f"load={f.read().split()[0]}", flush=True)
    spec = None
    for net, vnnlib in CASES:
        spec = vnnlib or spec
        name = os.path.basename(net)[:-len(".onnx")]
        if wanted and name not in wanted:
            continue
        path = os.path.join(args.data, net)
        lo, hi = input_box(os.path.join(args.data, spec))
        model = denote.load(path)
        shape = list(model.input_shapes[0])
        lo_d, hi_d = lo.reshape(shape), hi.reshape(shape)
        tmodel = None if args.no_lirpa else lirpa_model(torch, path)
        tl, th = torch_box(torch, tmodel, lo_d, hi_d) if tmodel is not None else (None, None)
        if tmodel is not None and tl is None:
            print(f"auto_LiRPA net={name}: the converted module takes neither the ONNX input's layout nor NCHW",
                  flush=True)
        for method in args.methods.split(","):
            if tl is not None:
                t, r = time_lirpa(torch, tmodel, (tl + th) / 2, tl, th, method, args.repeat)
                print(f"auto_LiRPA method={method} net={name} time_s={t:.4f} mean_width={mean_width(r):.6f}",
                      flush=True)
            for arith in args.arith.split(","):
                t, r = time_denote(model, np.asarray(lo_d, dtype=np.float64), np.asarray(hi_d, dtype=np.float64),
                                   method, arith, args.repeat)
                print(f"denote({arith}) method={method} net={name} time_s={t:.4f} mean_width={mean_width(r):.6f}",
                      flush=True)


if __name__ == "__main__":
    main()
