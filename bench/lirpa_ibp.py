#!/usr/bin/env python3
"""auto_LiRPA's IBP on the networks that bench/ibp_bench.cc exports with --dump DIR.

For each network directory under --data (acas, mnist: W<k>.npy [out, in], b<k>.npy, center.npy,
eps.txt, ibp_f32_lo/hi.npy and ibp_f64_lo/hi.npy = denote's output boxes), builds the same
torch.nn.Sequential (Linear, ReLU, ..., Linear; float32, the weights are exact: they lie on the
bfloat16 grid), wraps it in auto_LiRPA's BoundedModule and times
  build: BoundedModule(model, dummy input)
  ibp:   compute_bounds(x=(BoundedTensor(center, PerturbationLpNorm(inf, eps)),), method="IBP")
each as the best of --repeat blocks of at least 0.3 s (build: best of --repeat single calls), and
prints one line per network:
  lirpa net=acas build_s=... ibp_s=... diff_f32=... diff_f64=... lirpa_width=...
diff_*: the largest |lower bound difference| or |upper bound difference| against denote's box.

Usage: /usr/bin/python3 bench/lirpa_ibp.py --lirpa AUTO_LIRPA_CHECKOUT --data DUMP_DIR [--repeat R] [--threads N]
"""
import argparse
import os
import sys
import time


def best_block(fn, repeat, min_seconds=0.3):
    """Best seconds per call of fn over `repeat` blocks of at least min_seconds each."""
    best = float("inf")
    for _ in range(repeat):
        calls, start = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds:
                break
        best = min(best, elapsed / calls)
    return best


def load_net(np, torch, d):
    layers, k = [], 0
    while os.path.exists(os.path.join(d, f"W{k}.npy")):
        w = np.load(os.path.join(d, f"W{k}.npy")).astype(np.float32)
        b = np.load(os.path.join(d, f"b{k}.npy")).astype(np.float32)
        lin = torch.nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w))
            lin.bias.copy_(torch.from_numpy(b))
        if layers:
            layers.append(torch.nn.ReLU())
        layers.append(lin)
        k += 1
    if not layers:
        sys.exit(f"lirpa_ibp: no W0.npy under {d}")
    return torch.nn.Sequential(*layers).eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lirpa", required=True, help="auto_LiRPA checkout (the directory holding auto_LiRPA/)")
    ap.add_argument("--data", required=True, help="directory written by ibp_bench --dump")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    sys.path.insert(0, os.path.abspath(args.lirpa))
    import numpy as np
    import torch
    from auto_LiRPA import BoundedModule, BoundedTensor
    from auto_LiRPA.perturbations import PerturbationLpNorm

    torch.set_num_threads(args.threads)
    print(f"lirpa_info torch={torch.__version__} threads={args.threads} "
          f"auto_lirpa={getattr(sys.modules['auto_LiRPA'], '__version__', 'unknown')}")
    for net in ("acas", "mnist"):
        d = os.path.join(args.data, net)
        if not os.path.isdir(d):
            continue
        model = load_net(np, torch, d)
        center = torch.from_numpy(np.load(os.path.join(d, "center.npy")).astype(np.float32)).unsqueeze(0)
        eps = float(open(os.path.join(d, "eps.txt")).read())

        build_s, bounded = float("inf"), None
        for _ in range(max(args.repeat, 1)):
            start = time.perf_counter()
            bounded = BoundedModule(model, torch.zeros_like(center))
            build_s = min(build_s, time.perf_counter() - start)
        x = BoundedTensor(center, PerturbationLpNorm(norm=np.inf, eps=eps))

        def ibp():
            with torch.no_grad():
                return bounded.compute_bounds(x=(x,), method="IBP")

        ibp_s = best_block(ibp, args.repeat)
        lb, ub = ibp()
        lb = lb.detach().double().numpy().reshape(-1)
        ub = ub.detach().double().numpy().reshape(-1)
        diffs = {}
        for arith in ("f32", "f64"):
            lo = np.load(os.path.join(d, f"ibp_{arith}_lo.npy")).reshape(-1)
            hi = np.load(os.path.join(d, f"ibp_{arith}_hi.npy")).reshape(-1)
            diffs[arith] = float(max(np.abs(lb - lo).max(), np.abs(ub - hi).max()))
        print(f"lirpa net={net} build_s={build_s:.6e} ibp_s={ibp_s:.6e} diff_f32={diffs['f32']:.3e} "
              f"diff_f64={diffs['f64']:.3e} lirpa_width={float((ub - lb).max()):.4g}")


if __name__ == "__main__":
    main()
