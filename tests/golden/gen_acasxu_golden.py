#!/usr/bin/env python3
"""Golden outputs of the 45 ACAS Xu networks (tests/data/acasxu/*.onnx) on fixed inputs.

Independent of denote: the weights are read with python3-onnx (onnx.numpy_helper), and the graph
(Sub, Flatten, MatMul, Add, Relu) is evaluated by a tiny interpreter below in float64, every dot
product summed exactly with math.fsum (so the golden value is the correctly rounded result of the
exact real-number dot product of the rounded inputs of each layer). Writes
tests/data/acasxu/golden.json. Run offline with the system python (Debian python3-onnx):

    /usr/bin/python3 tests/golden/gen_acasxu_golden.py
"""
import json
import math
import os

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "acasxu")

# Points in the networks' normalized input box (roughly [-0.5, 0.5] per coordinate).
INPUTS = [
    [0.0, 0.0, 0.0, 0.0, 0.0],
    [0.2, -0.1, 0.3, 0.4, -0.3],
    [-0.3, 0.25, -0.45, 0.5, 0.5],
    [0.6, 0.4, -0.2, -0.4, 0.1],
]


def matmul_fsum(a, b):
    """a [m, k] @ b [k, n] with each inner product summed exactly (math.fsum)."""
    out = np.empty((a.shape[0], b.shape[1]))
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            out[i, j] = math.fsum(float(a[i, r]) * float(b[r, j]) for r in range(a.shape[1]))
    return out


def run(model, x):
    g = model.graph
    env = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in g.initializer}
    real_inputs = [v.name for v in g.input if v.name not in env]
    assert len(real_inputs) == 1, real_inputs
    env[real_inputs[0]] = np.array(x, dtype=np.float64).reshape(1, 1, 1, 5)
    for n in g.node:
        a = [env[i] for i in n.input]
        if n.op_type == "Sub":
            y = a[0] - a[1]
        elif n.op_type == "Add":
            y = a[0] + a[1]
        elif n.op_type == "Relu":
            y = np.maximum(a[0], 0.0)
        elif n.op_type == "Flatten":
            axis = next((at.i for at in n.attribute if at.name == "axis"), 1)
            y = a[0].reshape(int(np.prod(a[0].shape[:axis])), -1)
        elif n.op_type == "MatMul":
            y = matmul_fsum(a[0], a[1])
        else:
            raise ValueError("unexpected op " + n.op_type)
        env[n.output[0]] = y
    return env[g.output[0].name]


def main():
    nets = sorted(f for f in os.listdir(DATA) if f.endswith(".onnx"))
    assert len(nets) == 45, len(nets)
    golden = {"inputs": INPUTS, "outputs": {}}
    for f in nets:
        model = onnx.load(os.path.join(DATA, f))
        golden["outputs"][f] = [[float(v) for v in run(model, x).ravel()] for x in INPUTS]
    with open(os.path.join(DATA, "golden.json"), "w") as out:  # one network per line
        out.write('{"inputs": %s,\n "outputs": {\n' % json.dumps(INPUTS))
        lines = ['  %s: %s' % (json.dumps(f), json.dumps(v)) for f, v in golden["outputs"].items()]
        out.write(",\n".join(lines) + "\n }}\n")


if __name__ == "__main__":
    main()
