#!/usr/bin/env python3
"""A batch of 64 samples: denote's Model.bounds(x[N, ...], eps=) next to auto_LiRPA's compute_bounds on the
same batch (BoundedTensor of shape [N, ...], PerturbationLpNorm(inf, eps)), 1 thread, one process, CROWN and
IBP, on mnistfc 256x2 (784 inputs) and on a CIFAR CNN like auto_LiRPA's simple_verification example. denote bounds the samples one by one on a model prepared once; auto_LiRPA
bounds the batch as one tensor. Prints the best-of-3 times and the largest width difference.
Usage: OMP_NUM_THREADS=1 PYTHONPATH=build/python /usr/bin/python3 bench/lirpa_batch.py [--batch 64]"""
import os

import numpy as np

from lirpa_side import ROOT, best, load, parser


def networks(torch, golden, denote, batch, rng):
    """(name, denote model, torch model, samples as denote takes them, the same as a torch batch): mnistfc 256x2
    from its ONNX file, and a CIFAR CNN like auto_LiRPA's simple_verification example (conv 3->8 k4 s2 p1,
    relu, conv 8->16 k4 s2 p1, relu, fc 1024->100, relu, fc 100->10; random weights), captured from torch."""
    path = os.path.join(ROOT, "tests", "data", "mnistfc", "mnist-net_256x2.onnx")
    shape, layers = golden.onnx_chain(path)
    m = denote.load(path)
    in_shape = m.input_shapes[0]
    xs = rng.uniform(0, 1, (batch,) + tuple(in_shape[1:] if in_shape[0] == 1 else in_shape))
    yield ("mnistfc 256x2", m, golden.build_model(torch, layers, torch.float32), xs,
           torch.tensor(xs.reshape((batch,) + tuple(shape[1:])), dtype=torch.float32))
    nn = torch.nn
    torch.manual_seed(0)
    cnn = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.ReLU(), nn.Conv2d(8, 16, 4, 2, 1), nn.ReLU(), nn.Flatten(),
                        nn.Linear(1024, 100), nn.ReLU(), nn.Linear(100, 10)).eval()
    imgs = rng.uniform(0, 1, (batch, 3, 32, 32))
    xt = torch.tensor(imgs, dtype=torch.float32)
    yield "cifar cnn 8/16", denote.from_torch(cnn, (xt[:1],)), cnn, imgs, xt


def main():
    ap = parser(__doc__)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--eps", type=float, default=0.01)
    a = ap.parse_args()
    lib = load(a.lirpa)
    torch, golden = lib.torch, lib.golden
    BoundedModule, BoundedTensor, PerturbationLpNorm = lib.BoundedModule, lib.BoundedTensor, lib.PerturbationLpNorm
    import denote

    for name, m, model, xs, xt in networks(torch, golden, denote, a.batch, np.random.default_rng(0)):
        for method in ("IBP", "CROWN"):
            (dlo, dhi), dt = best(lambda: m.bounds(xs, eps=a.eps, method=method, arith="f32"), 3)
            bm = BoundedModule(model, torch.zeros_like(xt), device="cpu")
            x = BoundedTensor(xt, PerturbationLpNorm(norm=float("inf"), eps=a.eps))
            if method == "IBP":
                with torch.no_grad():
                    (llo, lhi), lt = best(lambda: bm.compute_bounds(x=(x,), method=method), 3)
            else:
                (llo, lhi), lt = best(lambda: bm.compute_bounds(x=(x,), method=method), 3)
            dw = float(np.mean(dhi - dlo))
            lw = float((lhi - llo).mean())
            print(f"{name}, {method}, batch {a.batch}: denote {dt * 1e3:.1f} ms (mean width {dw:.4f}); auto_LiRPA "
                  f"{lt * 1e3:.1f} ms (mean width {lw:.4f}); speed ratio {lt / dt:.2f}x")


if __name__ == "__main__":
    main()
