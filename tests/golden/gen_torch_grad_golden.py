#!/usr/bin/python3
"""Adds PyTorch autograd gradients to the golden cases under tests/data/golden/ (run offline, never at test time).

Usage (Debian's interpreter with python3-torch 1.13 and numpy):
    /usr/bin/python3 tests/golden/gen_torch_golden.py        # first, if the forward cases changed
    /usr/bin/python3 tests/golden/gen_torch_grad_golden.py [--out DIR]

The cases are those of gen_torch_golden.py (imported from this directory: same graphs, same inputs). For
every case whose expected value comes from PyTorch (case.custom is None) the reference closure runs again
in float64 with each input tensor a leaf that requires grad (the same leaf every time the closure asks for
the same input id; parameters and constants stay plain tensors), a cotangent C of the output's shape is
drawn (seeded from the case name) and torch.autograd gives d sum(C * y) / d input_k. Written into the
case directory, next to the forward files (which are checked, never rewritten):
    cotangent.npy     float64, C order, shaped like the output
    grad_input_<k>.npy float64, C order, shaped like input_<k>.npy; zeros where the output does not
                      depend on input k (torch.autograd.grad(..., allow_unused=True) gives None)

Cases are skipped (and listed at the end) when the expected value is not PyTorch's (random sources, the
hand-valued empty cases), when there is no input to differentiate with respect to, or when torch has no
derivative. A case whose output does not require grad although it has inputs (detach) gets all-zero
gradients: that is PyTorch's answer, and denote's gradient must stop there too.

Deterministic: seeds derive from the case names, torch runs on one thread; rerunning gives identical files.
"""
import argparse
import glob
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import gen_torch_golden as G  # noqa: E402  (sets one thread and deterministic algorithms)

GRAD_FILES = ("cotangent.npy", "grad_input_*.npy")


def same_array(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def check_forward_files(c, d):
    """The forward golden directory must hold exactly this generator's model and inputs."""
    if not os.path.exists(os.path.join(d, "model.json")):
        sys.exit(f"{c.name}: no {d}/model.json; run gen_torch_golden.py first")
    with open(os.path.join(d, "model.json")) as fh:
        if fh.read() != G.model_json(c):
            sys.exit(f"{c.name}: model.json differs from gen_torch_golden.py's; rerun it first")
    for k, (_, arr) in enumerate(c.inputs):
        on_disk = np.load(os.path.join(d, f"input_{k}.npy"))
        if not same_array(on_disk, np.array(arr, dtype=np.float64, order="C")):
            sys.exit(f"{c.name}: input_{k}.npy differs from gen_torch_golden.py's; rerun it first")


def gradients(c):
    """(cotangent, [grad per input], output) in float64, or (None, reason) when the case is skipped."""
    if c.custom is not None:
        return None, "expected value not from PyTorch" + (f" ({c.note})" if c.note else "")
    if not c.inputs:
        return None, "no input to differentiate with respect to"
    leaves = {nid: torch.tensor(arr, dtype=torch.float64, requires_grad=True) for nid, arr in c.inputs}

    def T(x):
        if isinstance(x, int):
            return leaves[x]
        return torch.tensor(np.asarray(x, dtype=np.float64), dtype=torch.float64)

    y = c.ref(T)
    assert y.dtype == torch.float64, (c.name, y.dtype)
    # The forward value must be the golden one (same closure, same float64 path).
    assert same_array(y.detach().contiguous().numpy(), c.result[0]), c.name
    rng = np.random.default_rng(zlib.crc32(("grad:" + c.name).encode()))
    C = np.array(rng.normal(size=tuple(y.shape)), dtype=np.float64, order="C")
    order = [nid for nid, _ in c.inputs]
    if not y.requires_grad:
        grads = [None] * len(order)
    else:
        try:
            grads = torch.autograd.grad(y, [leaves[i] for i in order], grad_outputs=torch.tensor(C),
                                        allow_unused=True)
        except RuntimeError as e:  # no derivative in torch
            return None, f"torch has no derivative: {str(e).splitlines()[0]}"
    out = []
    for nid, g in zip(order, grads):
        shape = tuple(leaves[nid].shape)
        out.append(np.zeros(shape) if g is None else np.array(g.detach().numpy(), dtype=np.float64, order="C"))
        assert out[-1].shape == shape, (c.name, nid)
    return (C, out), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "..", "data", "golden"))
    args = ap.parse_args()
    out_dir = os.path.normpath(args.out)
    cases = [c for fn in G.CASES for c in fn()]
    print(f"torch {torch.__version__}, numpy {np.__version__}: {len(cases)} cases -> {out_dir}")
    written, skipped, added = 0, [], 0
    for c in cases:
        d = os.path.join(out_dir, c.name)
        check_forward_files(c, d)
        for pattern in GRAD_FILES:  # stale gradient files (never the forward ones)
            for f in glob.glob(os.path.join(d, pattern)):
                os.remove(f)
        result, reason = gradients(c)
        if result is None:
            skipped.append((c.name, reason))
            continue
        C, grads = result
        np.save(os.path.join(d, "cotangent.npy"), C)
        for k, g in enumerate(grads):
            np.save(os.path.join(d, f"grad_input_{k}.npy"), g)
        added += sum(os.path.getsize(f) for p in GRAD_FILES for f in glob.glob(os.path.join(d, p)))
        written += 1
        kinds = sorted({n["kind"] for n in c.nodes} - {"input"})
        finite = [np.abs(g[np.isfinite(g)]).max(initial=0.0) for g in grads]
        special = sum(int((~np.isfinite(g)).sum()) for g in grads)
        print(f"  {c.name:32s} out={list(C.shape)!s:14s} inputs={len(grads)} max|grad|={max(finite):9.3g}"
              + (f" non-finite={special}" if special else "") + f" ops={','.join(kinds)}")
    print(f"skipped {len(skipped)}:")
    for name, reason in skipped:
        print(f"  {name:32s} {reason}")
    total = sum(os.path.getsize(f) for f in glob.glob(os.path.join(out_dir, "*", "*")) if os.path.isfile(f))
    print(f"gradients for {written} cases ({added} bytes); tests/data/golden holds {total} bytes of case files")
    if total > 3 * 1024 * 1024:
        sys.exit("golden data exceed 3 MB")


if __name__ == "__main__":
    main()
