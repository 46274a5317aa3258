#!/usr/bin/python3
"""PyTorch autograd gradients of the ACAS Xu and mnistfc networks (run offline, never at test time).

Usage (Debian's interpreter with python3-torch 1.13, python3-onnx and numpy):
    /usr/bin/python3 tests/golden/gen_torch_grad_nets.py

Independent of denote: the weights are read with python3-onnx (onnx.numpy_helper) and the graph (ACAS Xu:
Sub, Flatten, MatMul, Add, Relu; mnistfc: Flatten, Gemm, Relu) is rebuilt op by op in torch, float64
(the float32 initializers widen exactly). For a few fixed input points and a cotangent C per point (seeded
from the network's name and the point's index), torch.autograd gives the gradient of sum(C * y) with
respect to the input. Writes
    tests/data/acasxu/grad_golden.json     ACASXU_run2a_{1_1,2_3,3_7,5_9}_batch_2000.onnx, 4 points each
    tests/data/mnistfc/grad_golden.json    mnist-net_256x2.onnx, 3 points
each {"format": "denote.grad_golden.v1", "torch": VERSION, "nets": {FILE: {"input_shape", "output_shape",
"points": [{"input", "cotangent", "output", "grad_input"}]}}} with values flat, row-major.

ReLU networks are piecewise linear, so the gradient is exact up to the summation order of the dot products
as long as no pre-activation sits at a kink: the script requires every pre-activation at every point to be
at least 1e-6 away from 0 (so that no summation order can flip a ReLU), and cross-checks torch's gradient
against a backward pass with every dot product summed exactly (math.fsum), printing the largest deviation.
"""
import json
import math
import os
import zlib

import numpy as np
import onnx
import torch
from onnx import numpy_helper

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "data"))
KINK_MARGIN = 1e-6

ACAS_NETS = ["ACASXU_run2a_1_1_batch_2000.onnx", "ACASXU_run2a_2_3_batch_2000.onnx",
             "ACASXU_run2a_3_7_batch_2000.onnx", "ACASXU_run2a_5_9_batch_2000.onnx"]
# Points in the networks' normalized input box (those of gen_acasxu_golden.py).
ACAS_POINTS = [
    [0.0, 0.0, 0.0, 0.0, 0.0],
    [0.2, -0.1, 0.3, 0.4, -0.3],
    [-0.3, 0.25, -0.45, 0.5, 0.5],
    [0.6, 0.4, -0.2, -0.4, 0.1],
]


def mnist_points():
    """Three 784-pixel images in [0, 1]: seeded uniform noise, a seeded sparse 'stroke' image, mid grey."""
    rng = np.random.default_rng(zlib.crc32(b"mnistfc points"))
    noise = rng.uniform(0.0, 1.0, 784)
    sparse = np.where(rng.random(784) < 0.2, rng.uniform(0.5, 1.0, 784), 0.0)
    grey = np.full(784, 0.5)
    return [p.tolist() for p in (noise, sparse, grey)]


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


class Net:
    """The ONNX graph as a list of float64 torch steps; records pre-activations (the inputs of Relu)."""

    def __init__(self, path):
        self.model = onnx.load(path)
        g = self.model.graph
        self.init = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in g.initializer}
        real = [v for v in g.input if v.name not in self.init]
        assert len(real) == 1, [v.name for v in real]
        self.input_name = real[0].name
        self.input_shape = [d.dim_value for d in real[0].type.tensor_type.shape.dim]
        self.output_name = g.output[0].name

    def forward(self, x):
        env = {k: torch.tensor(v) for k, v in self.init.items()}
        env[self.input_name] = x
        pre = []
        for n in self.model.graph.node:
            a = [env[i] for i in n.input]
            if n.op_type == "Sub":
                y = a[0] - a[1]
            elif n.op_type == "Add":
                y = a[0] + a[1]
            elif n.op_type == "Relu":
                pre.append(a[0].detach().numpy().copy())
                y = torch.relu(a[0])
            elif n.op_type == "Flatten":
                axis = attr(n, "axis", 1)
                y = a[0].reshape(int(np.prod(a[0].shape[:axis])), -1)
            elif n.op_type == "MatMul":
                y = torch.matmul(a[0], a[1])
            elif n.op_type == "Gemm":
                assert attr(n, "alpha", 1.0) == 1.0 and attr(n, "beta", 1.0) == 1.0 and attr(n, "transA", 0) == 0
                w = a[1].t() if attr(n, "transB", 0) else a[1]
                y = torch.matmul(a[0], w) + a[2]
            else:
                raise ValueError("unexpected op " + n.op_type)
            env[n.output[0]] = y
        return env[self.output_name], pre

    def linear_layers(self):
        """(W [in, out], mask index) per MatMul/Gemm in order, for the exact backward pass."""
        layers = []
        for n in self.model.graph.node:
            if n.op_type == "MatMul":
                layers.append(self.init[n.input[1]])
            elif n.op_type == "Gemm":
                w = self.init[n.input[1]]
                layers.append(w.T if attr(n, "transB", 0) else w)
        return layers


def exact_backward(net, pre, C):
    """d sum(C * y) / d x with every dot product summed exactly: g <- W (mask * g), layer by layer."""
    layers = net.linear_layers()
    assert len(layers) == len(pre) + 1
    g = np.asarray(C, dtype=np.float64).ravel()
    for i in reversed(range(len(layers))):
        if i < len(layers) - 1:
            g = np.where(pre[i].ravel() > 0, g, 0.0)
        W = layers[i]
        g = np.array([math.fsum(float(W[r, j]) * float(g[j]) for j in range(W.shape[1]) if g[j] != 0.0)
                      for r in range(W.shape[0])])
    return g


def run_net(path, points):
    net = Net(path)
    name = os.path.basename(path)
    entry = {"input_shape": net.input_shape, "points": []}
    worst_dev, worst_margin = 0.0, math.inf
    for k, p in enumerate(points):
        x = torch.tensor(np.array(p, dtype=np.float64).reshape(net.input_shape), requires_grad=True)
        y, pre = net.forward(x)
        margin = min(float(np.abs(z).min()) for z in pre)
        assert margin >= KINK_MARGIN, (name, k, margin)
        worst_margin = min(worst_margin, margin)
        rng = np.random.default_rng(zlib.crc32(f"{name}:{k}".encode()))
        C = rng.normal(size=tuple(y.shape))
        (g,) = torch.autograd.grad(y, [x], grad_outputs=torch.tensor(C))
        g = g.detach().numpy().ravel()
        exact = exact_backward(net, pre, C)
        worst_dev = max(worst_dev, float(np.max(np.abs(g - exact) / np.maximum(1.0, np.abs(exact)))))
        entry["output_shape"] = list(y.shape)
        entry["points"].append({"input": [float(v) for v in p], "cotangent": [float(v) for v in C.ravel()],
                                "output": [float(v) for v in y.detach().numpy().ravel()],
                                "grad_input": [float(v) for v in g]})
    print(f"  {name:36s} {len(points)} points, min |pre-activation| {worst_margin:.3g}, "
          f"torch vs exactly summed backward: max rel {worst_dev:.3g}")
    assert worst_dev <= 1e-13, (name, worst_dev)
    return entry


def write(path, nets):
    doc = {"format": "denote.grad_golden.v1", "torch": torch.__version__, "nets": nets}
    with open(path, "w") as fh:  # one point per line
        fh.write('{"format": %s, "torch": %s, "nets": {\n' % (json.dumps(doc["format"]), json.dumps(doc["torch"])))
        blocks = []
        for f, e in nets.items():
            pts = ",\n".join("   " + json.dumps(p, allow_nan=False) for p in e["points"])
            blocks.append(' %s: {"input_shape": %s, "output_shape": %s, "points": [\n%s]}'
                          % (json.dumps(f), json.dumps(e["input_shape"]), json.dumps(e["output_shape"]), pts))
        fh.write(",\n".join(blocks) + "\n}}\n")
    assert json.load(open(path)) == doc
    print(f"  -> {path} ({os.path.getsize(path)} bytes)")


def main():
    print(f"torch {torch.__version__}, onnx {onnx.__version__}, numpy {np.__version__}")
    acas = {f: run_net(os.path.join(DATA, "acasxu", f), ACAS_POINTS) for f in ACAS_NETS}
    write(os.path.join(DATA, "acasxu", "grad_golden.json"), acas)
    f = "mnist-net_256x2.onnx"
    mnist = {f: run_net(os.path.join(DATA, "mnistfc", f), mnist_points())}
    write(os.path.join(DATA, "mnistfc", "grad_golden.json"), mnist)


if __name__ == "__main__":
    main()
