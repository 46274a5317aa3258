#!/usr/bin/env python3
"""L2 and L1 balls: denote's CROWN (Model.bounds(x0, eps=, norm=)) next to auto_LiRPA's CROWN with
PerturbationLpNorm(norm, eps), on ACAS Xu 1_1 at the center of the README's box, 1 thread, one process.
Both concretise every linear bound, the intermediate ones included, over the ball (denote: the larger of
the ball's and its bounding box's minimum, Subdomain::ball). Prints the mean
widths, their ratio, the best-of-5 times, and whether each tool's bounds contain the outputs sampled in the
ball (4000 points; a sound bound must).
Usage: OMP_NUM_THREADS=1 PYTHONPATH=build/python /usr/bin/python3 bench/lirpa_lp.py [--eps 0.02]"""
import os

import numpy as np

from lirpa_side import ROOT, best, load, parser


def main():
    ap = parser(__doc__)
    ap.add_argument("--eps", type=float, default=0.02)
    a = ap.parse_args()
    lib = load(a.lirpa)
    torch, golden = lib.torch, lib.golden
    BoundedModule, BoundedTensor, PerturbationLpNorm = lib.BoundedModule, lib.BoundedTensor, lib.PerturbationLpNorm
    import denote

    path = os.path.join(ROOT, "tests", "data", "acasxu", "ACASXU_run2a_1_1_batch_2000.onnx")
    shape, layers = golden.onnx_chain(path)
    lo = np.array([[[[0.6, -0.5, -0.5, 0.45, -0.5]]]])
    hi = np.array([[[[0.68, 0.5, 0.5, 0.5, -0.45]]]])
    x0 = (lo + hi) / 2
    m = denote.load(path)
    model = golden.build_model(torch, layers, torch.float64)
    center = torch.tensor(x0.reshape(shape), dtype=torch.float64)
    rng = np.random.default_rng(0)

    def sampled(p, n=4000):
        """The outputs at n points of the ball (random directions, radii up to eps): a range every sound
        bound must contain."""
        ys = []
        for _ in range(n):
            v = rng.standard_normal(5) if p == 2 else rng.laplace(size=5) if p == 1 else rng.uniform(-1, 1, 5)
            v *= a.eps / np.linalg.norm(v, ord=p) * (rng.uniform(0, 1) if p != float("inf") else 1)
            ys.append(np.asarray(m.run((x0.ravel() + v).reshape(x0.shape)), dtype=np.float64).ravel())
        return np.min(ys, 0), np.max(ys, 0)

    for p in (2.0, 1.0, float("inf")):
        (dlo, dhi), dt = best(lambda: m.bounds(x0, eps=a.eps, norm=p, method="crown"))
        bm = BoundedModule(model, torch.zeros_like(center), device="cpu")
        x = BoundedTensor(center, PerturbationLpNorm(norm=p, eps=a.eps))
        (llo, lhi), lt = best(lambda: bm.compute_bounds(x=(x,), method="CROWN"))
        dw = float(np.mean(dhi - dlo))
        lw = float((lhi - llo).mean())
        smin, smax = sampled(p)
        llo, lhi = llo.detach().numpy().ravel(), lhi.detach().numpy().ravel()
        d_ok = bool(np.all(dlo.ravel() <= smin) and np.all(smax <= dhi.ravel()))
        l_ok = bool(np.all(llo <= smin) and np.all(smax <= lhi))
        print(f"norm={p}: denote mean width {dw:.6f} in {dt * 1e3:.2f} ms; auto_LiRPA {lw:.6f} in {lt * 1e3:.2f} ms; "
              f"width ratio {dw / lw:.3f}; sampled outputs' mean range {float(np.mean(smax - smin)):.6f}; "
              f"contains the samples: denote {d_ok}, auto_LiRPA {l_ok}")


if __name__ == "__main__":
    main()
