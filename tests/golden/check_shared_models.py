#!/usr/bin/env python3
"""Every ONNX network under a data directory (default ../shared/data) through `denote run`, compared
with an independent float64 evaluation on random inputs.

The reference is the small numpy interpreter below (no denote code): it covers the ops of the
VNN-COMP / ACAS Xu / MNIST / CIFAR networks we ship against (MatMul, Gemm, Add, Sub, Mul, Div,
Relu, Sigmoid, Tanh, Flatten, Reshape, Constant, Conv, MaxPool, AveragePool, Pad, Transpose,
Concat, Slice, Gather, Unsqueeze, Squeeze, Shape, BatchNormalization, Softmax, Identity). A model
with another op is reported as "no reference" (not a failure of denote). Inputs are uniform in
[0, 1) with a fixed seed; a symbolic dim reads as 1. Agreement: |denote - ref| <= 1e-9 (1 + |ref|).

    /usr/bin/python3 tests/golden/check_shared_models.py [DATA_DIR] [--denote build/bin/denote] [--sample N]
    /usr/bin/python3 tests/golden/check_shared_models.py --write-golden tests/data/verivital

The second form writes DIR/golden.json: for each model in DIR, two random inputs (seed 18) and the
reference outputs (read by tests/unit/onnx_shared_models_test.cc).

Exit status: 0 when every model loads, checks, runs and agrees; 1 otherwise; 77 when DATA_DIR does
not exist (a clean clone has no ../shared).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def conv2d(x, w, b, strides, pads, dil, group):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (x.shape[2] - dil[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (x.shape[3] - dil[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, m, oh, ow))
    mg = m // group
    for g in range(group):
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dil[0]: i * dil[0] + strides[0] * oh: strides[0],
                           j * dil[1]: j * dil[1] + strides[1] * ow: strides[1]]
                out[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch, w[g * mg:(g + 1) * mg, :, i, j])
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def pool2d(x, k, s, pads, kind, count_include_pad):
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])), constant_values=fill)
    ones = np.pad(np.ones_like(x), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - k[0]) // s[0] + 1
    ow = (xp.shape[3] - k[1]) // s[1] + 1
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cnt = k[0] * k[1] if count_include_pad else ones[:, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]].sum(axis=(2, 3))
                out[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return out


def run_reference(model, feeds):
    env = {t.name: numpy_helper.to_array(t).astype(np.float64) if numpy_helper.to_array(t).dtype.kind == "f"
           else numpy_helper.to_array(t) for t in model.graph.initializer}
    env.update(feeds)
    for node in model.graph.node:
        a = attrs(node)
        x = [env[i] if i else None for i in node.input]
        op = node.op_type
        if op == "Constant":
            v = numpy_helper.to_array(a["value"])
            y = v.astype(np.float64) if v.dtype.kind == "f" else v
        elif op in ("Add", "Sub", "Mul", "Div"):
            y = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op](x[0], x[1])
        elif op == "MatMul":
            y = np.matmul(x[0], x[1])
        elif op == "Gemm":
            A = x[0].T if a.get("transA", 0) else x[0]
            B = x[1].T if a.get("transB", 0) else x[1]
            y = a.get("alpha", 1.0) * (A @ B)
            if len(x) > 2 and x[2] is not None:
                y = y + a.get("beta", 1.0) * x[2]
        elif op == "Relu":
            y = np.maximum(x[0], 0)
        elif op == "Sigmoid":
            y = 1 / (1 + np.exp(-x[0]))
        elif op == "Tanh":
            y = np.tanh(x[0])
        elif op == "Identity":
            y = x[0]
        elif op == "Flatten":
            ax = a.get("axis", 1)
            y = x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)
        elif op == "Reshape":
            shape = [x[0].shape[i] if d == 0 else d for i, d in enumerate(x[1].astype(np.int64))]
            y = x[0].reshape(shape)
        elif op == "Transpose":
            y = np.transpose(x[0], a.get("perm"))
        elif op == "Conv":
            k = x[1].shape[2:]
            y = conv2d(x[0], x[1], x[2] if len(x) > 2 else None, a.get("strides", [1, 1]), a.get("pads", [0, 0, 0, 0]),
                       a.get("dilations", [1, 1]), a.get("group", 1))
        elif op in ("MaxPool", "AveragePool"):
            y = pool2d(x[0], a["kernel_shape"], a.get("strides", [1, 1]), a.get("pads", [0, 0, 0, 0]),
                       "max" if op == "MaxPool" else "avg", a.get("count_include_pad", 0))
        elif op == "Pad":
            pads = list(x[1].astype(np.int64)) if len(x) > 1 else a["pads"]
            value = float(x[2]) if len(x) > 2 and x[2] is not None else a.get("value", 0.0)
            r = x[0].ndim
            mode = a.get("mode", b"constant")
            mode = mode.decode() if isinstance(mode, bytes) else mode
            width = [(pads[i], pads[i + r]) for i in range(r)]
            y = np.pad(x[0], width, mode=mode, **({"constant_values": value} if mode == "constant" else {}))
        elif op == "BatchNormalization":
            s = (1, -1) + (1,) * (x[0].ndim - 2)
            y = (x[0] - x[3].reshape(s)) / np.sqrt(x[4].reshape(s) + a.get("epsilon", 1e-5)) * x[1].reshape(s) + x[2].reshape(s)
        elif op == "Softmax":
            e = np.exp(x[0] - x[0].max(axis=a.get("axis", -1), keepdims=True))
            y = e / e.sum(axis=a.get("axis", -1), keepdims=True)
        elif op == "Concat":
            y = np.concatenate(x, axis=a["axis"])
        elif op == "Shape":
            y = np.array(x[0].shape, dtype=np.int64)
        elif op == "Gather":
            y = np.take(x[0], x[1], axis=a.get("axis", 0))
        elif op == "Unsqueeze":
            axes = a.get("axes", list(x[1]) if len(x) > 1 else [])
            y = x[0]
            for ax in sorted(axes):
                y = np.expand_dims(y, ax)
        elif op == "Squeeze":
            axes = a.get("axes", list(x[1]) if len(x) > 1 else None)
            y = np.squeeze(x[0], axis=tuple(axes) if axes is not None else None)
        elif op == "Slice":
            y = x[0]
            starts, ends = x[1], x[2]
            axes = x[3] if len(x) > 3 else range(len(starts))
            steps = x[4] if len(x) > 4 else [1] * len(starts)
            sl = [slice(None)] * y.ndim
            for s0, e0, ax, st in zip(starts, ends, axes, steps):
                sl[int(ax)] = slice(int(s0), int(e0), int(st))
            y = y[tuple(sl)]
        else:
            raise KeyError(op)
        env[node.output[0]] = y
    return [env[o.name] for o in model.graph.output]


def real_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    out = []
    for i in model.graph.input:
        if i.name in inits:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else 1 for d in i.type.tensor_type.shape.dim]
        out.append((i.name, dims))
    return out


def check(path, denote, rng):
    model = onnx.load(path)
    ins = real_inputs(model)
    feeds = {name: rng.random(dims) for name, dims in ins}
    with tempfile.TemporaryDirectory() as tmp:
        args = [denote, "run", path, "--json"]
        for k, (name, _) in enumerate(ins):
            f = os.path.join(tmp, f"in{k}.npy")
            np.save(f, feeds[name])
            args += ["--input", "@" + f]
        chk = subprocess.run([denote, "check", path], capture_output=True, text=True)
        if chk.returncode != 0:
            return "check failed: " + chk.stderr.strip()[:300]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            return "run failed: " + r.stderr.strip()[:300]
        got = json.loads(r.stdout)["outputs"]
    try:
        want = run_reference(model, feeds)
    except KeyError as e:
        return f"no reference for op {e}"
    for g, w in zip(got, want):
        gv = np.array(g["values"], dtype=np.float64).reshape(g["shape"])
        w = np.asarray(w, dtype=np.float64).reshape(gv.shape)
        err = np.max(np.abs(gv - w) / (1 + np.abs(w))) if w.size else 0.0
        if not err <= 1e-9:
            return f"mismatch: max relative error {err:.3g}"
    return None


def write_golden(folder):
    rng = np.random.default_rng(18)
    cases = []
    for p in sorted(glob.glob(os.path.join(folder, "*.onnx"))):
        model = onnx.load(p)
        for _ in range(2):
            feeds = {name: rng.random(dims) for name, dims in real_inputs(model)}
            outs = run_reference(model, feeds)
            cases.append({"model": os.path.basename(p),
                          "inputs": [feeds[n].reshape(-1).tolist() for n, _ in real_inputs(model)],
                          "outputs": [np.asarray(o, dtype=np.float64).reshape(-1).tolist() for o in outs]})
    with open(os.path.join(folder, "golden.json"), "w") as f:
        json.dump({"generator": "tests/golden/check_shared_models.py --write-golden", "cases": cases}, f)
    print(f"wrote {len(cases)} cases to {os.path.join(folder, 'golden.json')}")
    return 0


def main():
    argv = sys.argv[1:]
    if len(argv) == 2 and argv[0] == "--write-golden":
        return write_golden(argv[1])
    denote = os.path.join(ROOT, "build", "bin", "denote")
    if "--denote" in argv:
        i = argv.index("--denote")
        denote = argv[i + 1]
        del argv[i:i + 2]
    # --sample N: the first model of every directory and every N-th after it (the sanitizer pass, where each
    # CLI start costs about half a second; the release pass checks them all).
    every = 1
    if "--sample" in argv:
        i = argv.index("--sample")
        every = max(1, int(argv[i + 1]))
        del argv[i:i + 2]
    data = argv[0] if argv else os.path.join(ROOT, "..", "shared", "data")
    if not os.path.isdir(data):
        print(f"check_shared_models: {data} not found; skipped")
        return 77
    rng = np.random.default_rng(18)
    bad = 0
    paths = sorted(set(os.path.realpath(p) for p in glob.glob(os.path.join(data, "**", "*.onnx"), recursive=True)))
    if every > 1:
        seen = {}
        kept = []
        for p in paths:
            k = seen.get(os.path.dirname(p), 0)
            seen[os.path.dirname(p)] = k + 1
            if k % every == 0:
                kept.append(p)
        paths = kept
    for p in paths:
        problem = check(p, denote, rng)
        print(("ok   " if problem is None else "FAIL ") + os.path.relpath(p, data) + ("" if problem is None else ": " + problem))
        bad += problem is not None
    print(f"check_shared_models: {len(paths)} models, {len(paths) - bad} agree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
