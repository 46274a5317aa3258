#!/usr/bin/python3
"""Writes the mnistfc 784-256-256-10 MLP (its trained weights) at a chosen batch size.

The VNN-COMP file mnist-net_256x2.onnx has a fixed batch of 1 (input [1, 784, 1], Flatten, three Gemm
with two Relu). This script reads its initializers with python3-onnx and writes the same network as a
torchlean.ir.v1 document with input [BATCH, 784] (linear, relu, linear, relu, linear), plus BATCH
seeded uniform [0, 1) images as a .npy file, so that `denote bench` can time the network per call at
that batch (issue 20's bfloat16-vs-f32 MLP figure; bench/formats_mlp.sh).

Usage: /usr/bin/python3 bench/mnist_mlp_json.py ONNX BATCH OUT.json OUT.npy [--seed S]
"""
import argparse
import json

import numpy as np
import onnx
from onnx import numpy_helper


def layers(model):
    """The Gemm nodes' (weight [out, in], bias [out]) in graph order; checks the shape of the net."""
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    ops = [n.op_type for n in model.graph.node]
    if ops != ["Flatten", "Gemm", "Relu", "Gemm", "Relu", "Gemm"]:
        raise SystemExit(f"unexpected graph {ops}: expected Flatten, Gemm, Relu, Gemm, Relu, Gemm")
    out = []
    for n in model.graph.node:
        if n.op_type != "Gemm":
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        if attrs.get("transB", 0) != 1 or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
            raise SystemExit(f"Gemm {n.name}: expected transB=1, alpha=beta=1, got {attrs}")
        out.append((init[n.input[1]].astype(np.float64), init[n.input[2]].astype(np.float64)))
    return out


def document(weights, batch):
    nodes = [{"id": 0, "kind": "input", "parents": [], "shape": [batch, int(weights[0][0].shape[1])]}]
    for k, (w, b) in enumerate(weights):
        if k > 0:
            nodes.append({"id": len(nodes), "kind": "relu", "parents": [len(nodes) - 1],
                          "shape": nodes[-1]["shape"]})
        out_dim, in_dim = (int(d) for d in w.shape)
        nodes.append({"id": len(nodes), "kind": "linear", "parents": [len(nodes) - 1], "shape": [batch, out_dim],
                      "out_dim": out_dim, "in_dim": in_dim, "weight": w.tolist(), "bias": b.tolist()})
    return {"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [len(nodes) - 1], "nodes": nodes}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("onnx")
    ap.add_argument("batch", type=int)
    ap.add_argument("json_out")
    ap.add_argument("npy_out")
    ap.add_argument("--seed", type=int, default=20)
    a = ap.parse_args()
    if a.batch < 1:
        raise SystemExit("batch: expected at least 1")
    weights = layers(onnx.load(a.onnx))
    with open(a.json_out, "w") as f:
        json.dump(document(weights, a.batch), f)
    x = np.random.default_rng(a.seed).random((a.batch, int(weights[0][0].shape[1])))
    np.save(a.npy_out, x)


if __name__ == "__main__":
    main()
