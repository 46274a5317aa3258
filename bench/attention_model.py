#!/usr/bin/env python3
"""Writes a transformer-ish attention block as torchlean.ir.v1 JSON, and an input .npy, for `denote bench`
(docs/PERF.md, "Fast f32 plan: matmul and softmax"). No numpy needed.

    python3 bench/attention_model.py OUT_DIR [--batch 8] [--tokens 128] [--width 64]
    denote bench OUT_DIR/attention.json --input @OUT_DIR/x.npy --arith f32 --provider prefer:openblas

The block: q, k, v = linear(x); s = matmul(q, transpose(k, 1, 2)); p = softmax(s, axis 2);
o = matmul(p, v); y = linear(o). x is [batch, tokens, width]. Weights are uniform in
+-1/sqrt(width) from a fixed seed (1), the input uniform in [-1, 1) (seed 2).
"""
import argparse
import json
import os
import random
import struct


def linear_node(node_id, parent, shape, width, rng):
    bound = width ** -0.5
    weight = [[rng.uniform(-bound, bound) for _ in range(width)] for _ in range(width)]
    bias = [rng.uniform(-bound, bound) for _ in range(width)]
    return {"id": node_id, "kind": "linear", "parents": [parent], "shape": shape, "out_dim": width,
            "in_dim": width, "weight": weight, "bias": bias}


def model(batch, tokens, width):
    rng = random.Random(1)
    x = [batch, tokens, width]
    nodes = [{"id": 0, "kind": "input", "parents": [], "shape": x}]
    for node_id in (1, 2, 3):  # q, k, v
        nodes.append(linear_node(node_id, 0, x, width, rng))
    nodes.append({"id": 4, "kind": "transpose", "parents": [2], "shape": [batch, width, tokens], "axis1": 1, "axis2": 2})
    nodes.append({"id": 5, "kind": "matmul", "parents": [1, 4], "shape": [batch, tokens, tokens]})
    nodes.append({"id": 6, "kind": "softmax", "parents": [5], "shape": [batch, tokens, tokens], "axis": 2})
    nodes.append({"id": 7, "kind": "matmul", "parents": [6, 3], "shape": x})
    nodes.append(linear_node(8, 7, x, width, rng))
    return {"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [8], "nodes": nodes}


def write_npy(path, shape, values):
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{d}, " for d in shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack(f"<{len(values)}d", *values))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--width", type=int, default=64)
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "attention.json"), "w") as f:
        json.dump(model(a.batch, a.tokens, a.width), f)
    rng = random.Random(2)
    shape = [a.batch, a.tokens, a.width]
    write_npy(os.path.join(a.out_dir, "x.npy"), shape, [rng.uniform(-1, 1) for _ in range(a.batch * a.tokens * a.width)])


if __name__ == "__main__":
    main()
