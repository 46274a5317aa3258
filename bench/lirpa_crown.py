#!/usr/bin/env python3
"""auto_LiRPA's IBP, CROWN and alpha-CROWN timed at one thread on ACAS Xu 1_1 and mnistfc 256x2.

The reference side of denote's CROWN benchmark: float32, auto_LiRPA defaults (alpha-CROWN: its default
iterations, see tests/data/lirpa/crown_golden.json "alpha_crown_options"), as a user would run it. Cases
(networks and boxes as in tests/golden/gen_lirpa_golden.py, whose loaders this script imports):
  acasxu_1_1/identity   ACASXU_run2a_1_1 on the X box of prop_1.vnnlib (= prop_2's box), C = identity (5 rows)
  acasxu_1_1/prop_1     same box, C = [Y_0]
  acasxu_1_1/prop_2     same box, C = Y_0 - Y_j, j = 1..4
  mnistfc/identity      mnist-net_256x2 on the X box of prop_0_0.03.vnnlib, C = identity (10 rows)
  mnistfc/prop_0_0.03   same box, C = Y_label - Y_j, j != label (9 rows)
Per row and run: build = BoundedModule(model, dummy input) on a fresh module, bound = one compute_bounds call
on that module (IBP under torch.no_grad()); one untimed warm-up run per row, then the median over --repeat
runs of each. One line per row:
  lirpa row=<method>/<case> build_s=... bound_s=... lo=[..] hi=[..]

Usage (from the repository root, Debian's python3-torch + python3-onnx):

    OMP_NUM_THREADS=1 /usr/bin/python3 bench/lirpa_crown.py --lirpa ../shared/peers/auto_LiRPA \
        --vnnlib-dir ../shared/data --repeat 5 [--threads 1] [--methods IBP,CROWN,alpha-CROWN] [--cases acasxu,mnistfc]
"""
import argparse
import contextlib
import io
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lirpa", default=os.path.join(ROOT, "..", "shared", "peers", "auto_LiRPA"),
                    help="auto_LiRPA checkout (the directory holding auto_LiRPA/)")
    ap.add_argument("--vnnlib-dir", default=os.path.join(ROOT, "..", "shared", "data"),
                    help="directory with acasxu/prop_N.vnnlib and mnistfc/prop_*.vnnlib")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--methods", default="IBP,CROWN,alpha-CROWN")
    ap.add_argument("--cases", default="acasxu,mnistfc")
    args = ap.parse_args()

    sys.path.insert(0, os.path.abspath(args.lirpa))
    sys.path.insert(0, os.path.join(ROOT, "tests", "golden"))
    import torch
    import auto_LiRPA
    from auto_LiRPA import BoundedModule, BoundedTensor
    from auto_LiRPA.perturbations import PerturbationLpNorm
    import gen_lirpa_golden as golden

    torch.set_num_threads(args.threads)
    torch.set_default_dtype(torch.float32)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"lirpa_info torch={torch.__version__} auto_lirpa={auto_LiRPA.__version__} threads={args.threads} "
          f"repeat={args.repeat} dtype=float32 load={load}")

    rows = []
    if "acasxu" in args.cases:
        shape, layers = golden.onnx_chain(
            os.path.join(ROOT, "tests", "data", "acasxu", "ACASXU_run2a_1_1_batch_2000.onnx"))
        lo, hi, _ = golden.parse_vnnlib_box(os.path.join(args.vnnlib_dir, "acasxu", "prop_1.vnnlib"))
        lo2, hi2, _ = golden.parse_vnnlib_box(os.path.join(args.vnnlib_dir, "acasxu", "prop_2.vnnlib"))
        assert (lo, hi) == (lo2, hi2), "prop_1 and prop_2 boxes differ"
        rows += [("acasxu_1_1/identity", shape, layers, lo, hi, None),
                 ("acasxu_1_1/prop_1", shape, layers, lo, hi, golden.spec_rows("row0", 5)),
                 ("acasxu_1_1/prop_2", shape, layers, lo, hi, golden.spec_rows("label", 5, 0))]
    if "mnistfc" in args.cases:
        shape, layers = golden.onnx_chain(os.path.join(ROOT, "tests", "data", "mnistfc", "mnist-net_256x2.onnx"))
        lo, hi, label = golden.parse_vnnlib_box(os.path.join(args.vnnlib_dir, "mnistfc", "prop_0_0.03.vnnlib"))
        rows += [("mnistfc/identity", shape, layers, lo, hi, None),
                 ("mnistfc/prop_0_0.03", shape, layers, lo, hi, golden.spec_rows("label", 10, label))]

    for method in args.methods.split(","):
        for name, shape, layers, lo, hi, C in rows:
            model = golden.build_model(torch, layers, torch.float32)
            x_lo = torch.tensor(lo, dtype=torch.float32).reshape(shape)
            x_hi = torch.tensor(hi, dtype=torch.float32).reshape(shape)
            center = (x_lo + x_hi) / 2
            c = None if C is None else torch.tensor(C, dtype=torch.float32).unsqueeze(0)
            builds, bounds, result = [], [], None
            for run in range(args.repeat + 1):   # run 0: warm-up, not counted
                t0 = time.perf_counter()
                bm = BoundedModule(model, torch.zeros_like(center), device="cpu")
                t1 = time.perf_counter()
                x = BoundedTensor(center, PerturbationLpNorm(norm=float("inf"), x_L=x_lo, x_U=x_hi))
                log = io.StringIO()
                with contextlib.redirect_stdout(log):   # alpha-CROWN's early-stop prints
                    if method == "IBP":
                        with torch.no_grad():
                            t2 = time.perf_counter()
                            lb, ub = bm.compute_bounds(x=(x,), C=c, method=method)
                    else:
                        t2 = time.perf_counter()
                        lb, ub = bm.compute_bounds(x=(x,), C=c, method=method)
                t3 = time.perf_counter()
                if run:
                    builds.append(t1 - t0)
                    bounds.append(t3 - t2)
                result = (lb.detach().reshape(-1).tolist(), ub.detach().reshape(-1).tolist())
            fmt = lambda v: "[" + ",".join(f"{a:.6g}" for a in v) + "]"  # noqa: E731
            print(f"lirpa row={method}/{name} build_s={statistics.median(builds):.4e} "
                  f"bound_s={statistics.median(bounds):.4e} lo={fmt(result[0])} hi={fmt(result[1])}", flush=True)
            if method == "alpha-CROWN":   # iterations of the last run: upper side first, then lower
                stops = [int(m) + 1 for m in re.findall(r"Early stop at (\d+)th iter", log.getvalue())]
                print(f"lirpa_iters row={method}/{name} early_stops={stops or 'none'} (iterations run per "
                      f"side that stopped early; the others ran the full count)", flush=True)


if __name__ == "__main__":
    main()
