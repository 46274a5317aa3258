#!/usr/bin/python3
"""Python call overhead of denote's Model.run at batch 1 on ACAS Xu, against the same network as a
torch module (docs/PERF.md, "Python call overhead").

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [--repeat 7] [--calls 2000] [--threads 1]

The torch module is built from the ONNX file's own weights (onnx.numpy_helper): Sub(AvgImg),
Flatten, then Linear/ReLU pairs, in float32 and float64, called under torch.no_grad(). Each line is
the best of --repeat blocks of --calls calls (time.perf_counter per block). Two torch columns: the call
on a prepared tensor, and the call with numpy in and out (torch.from_numpy + .numpy()), which is what
Model.run does (numpy array in, numpy array out).
"""
import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_ONNX = os.path.join(ROOT, "tests", "data", "acasxu", "ACASXU_run2a_1_1_batch_2000.onnx")


def torch_module(path, dtype):
    import onnx
    import torch
    from onnx import numpy_helper

    g = onnx.load(path).graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}

    class Sub(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.register_buffer("c", torch.tensor(c))

        def forward(self, x):
            return x - self.c

    layers, pending = [], None
    for n in g.node:
        if n.op_type == "Sub":
            layers.append(Sub(inits[n.input[1]]))
        elif n.op_type == "Flatten":
            layers.append(torch.nn.Flatten())
        elif n.op_type == "MatMul":
            w = inits[n.input[1]]  # [in, out]
            pending = torch.nn.Linear(w.shape[0], w.shape[1])
            with torch.no_grad():
                pending.weight.copy_(torch.tensor(w.T))
        elif n.op_type == "Add":
            with torch.no_grad():
                pending.bias.copy_(torch.tensor(inits[n.input[1]]))
            layers.append(pending)
        elif n.op_type == "Relu":
            layers.append(torch.nn.ReLU())
        else:
            raise SystemExit("unexpected ONNX op " + n.op_type)
    return torch.nn.Sequential(*layers).to(dtype).eval()


def best_of(fn, calls, repeat):
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--onnx", default=DEFAULT_ONNX)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()

    import torch
    import denote

    torch.set_num_threads(a.threads)
    model = denote.load(a.onnx)
    x64 = np.array([[[[0.1, 0.2, 0.3, 0.4, 0.5]]]])
    print("uptime:", os.popen("uptime").read().strip())
    print("torch {}, numpy {}, denote {}, threads {}".format(torch.__version__, np.__version__, denote.__version__,
                                                              a.threads))
    print("| arith | denote run | denote run, provider=auto | torch (tensor) | torch (numpy in/out) | "
          "ratio torch(numpy)/denote | max abs diff |")
    print("|---|---|---|---|---|---|---|")
    ok = True
    for name, np_t, t_t in (("f32", np.float32, torch.float32), ("f64", np.float64, torch.float64)):
        x = x64.astype(np_t)
        net = torch_module(a.onnx, t_t)
        xt = torch.from_numpy(x)
        with torch.no_grad():
            ref = net(xt).numpy()
            diff = float(np.max(np.abs(model.run(x, arith=name) - ref)))
            d = best_of(lambda: model.run(x, arith=name), a.calls, a.repeat)
            dp = best_of(lambda: model.run(x, arith=name, provider="auto"), a.calls, a.repeat)
            t = best_of(lambda: net(xt), a.calls, a.repeat)
            tn = best_of(lambda: net(torch.from_numpy(x)).numpy(), a.calls, a.repeat)
        ok = ok and diff < 1e-4
        print("| {} | {:.1f} us | {:.1f} us | {:.1f} us | {:.1f} us | {:.2f}x | {:.1e} |".format(
            name, d * 1e6, dp * 1e6, t * 1e6, tn * 1e6, tn / min(d, dp), diff))
    # The floor: a two-node model (input, relu on [1, 5]): the binding plus the evaluator's fixed cost.
    b = denote.GraphBuilder()
    tiny = b.build(b.op("relu", b.input([1, 5])))
    z = np.zeros((1, 5))
    print("floor (input -> relu, [1, 5], f64): {:.1f} us per run".format(
        best_of(lambda: tiny.run(z), a.calls, a.repeat) * 1e6))
    print("uptime:", os.popen("uptime").read().strip())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
