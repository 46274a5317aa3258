#!/usr/bin/env python3
"""VNN-COMP's tool scripts (vnncomp_scripts/) on the 2021 test benchmark, as the competition runs them:
prepare_instance.sh v1 CATEGORY ONNX VNNLIB, then run_instance.sh v1 CATEGORY ONNX VNNLIB RESULTS TIMEOUT.
Each result file's first line must be the published answer (tests/data/vnncomp2021_test/expected.csv); a
sat file's witness is evaluated again by a numpy interpreter of the network's ONNX ops (not denote), and its inputs and
outputs must satisfy the property's assertions (this benchmark's simple `(assert (<= A B))` form), as
VNN-COMP's scorer checks a counterexample. Usage: vnncomp_scripts_test.py --cli CLI --repo ROOT"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def parse_witness(text):
    values = dict(re.findall(r"\(([XY]_\d+)\s+([-+0-9.eEinfa]+)\)", text))
    return {k: float(v) for k, v in values.items()}


def assertions(vnnlib):
    out = []
    for op, a, b in re.findall(r"\(assert \((<=|>=) (\S+) (\S+)\)\)", open(vnnlib).read()):
        out.append((op, a, b))
    if not out:
        fail(f"{vnnlib}: no simple assertions found")
    return out


def reference_eval(model, x):
    """The network in float32 by numpy, op by op (this benchmark's Sub, Flatten, MatMul, Add, Relu): an
    evaluation that shares nothing with denote (Debian's onnx has no onnx.reference)."""
    from onnx import numpy_helper
    env = {t.name: numpy_helper.to_array(t).astype(np.float32) for t in model.graph.initializer}
    real = [i for i in model.graph.input if i.name not in env]
    env[real[0].name] = x
    ops = {"Sub": lambda a, b: a - b, "Add": lambda a, b: a + b, "MatMul": lambda a, b: a @ b,
           "Relu": lambda a: np.maximum(a, np.float32(0)), "Flatten": lambda a: a.reshape(a.shape[0], -1)}
    for n in model.graph.node:
        if n.op_type not in ops:
            fail(f"the reference evaluator has no {n.op_type}")
        env[n.output[0]] = ops[n.op_type](*[env[i] for i in n.input]).astype(np.float32)
    return env[model.graph.output[0].name], real[0]


def check_witness(onnx_path, vnnlib, values):
    import onnx
    model = onnx.load(onnx_path)
    xs = sorted((k for k in values if k.startswith("X_")), key=lambda k: int(k[2:]))
    ys = sorted((k for k in values if k.startswith("Y_")), key=lambda k: int(k[2:]))
    real = [i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}][0]
    shape = [d.dim_value or 1 for d in real.type.tensor_type.shape.dim]
    x = np.array([values[k] for k in xs], dtype=np.float32).reshape(shape)
    y = np.asarray(reference_eval(model, x)[0], dtype=np.float64).ravel()
    if len(y) != len(ys):
        fail(f"witness has {len(ys)} outputs, the network {len(y)}")
    for k, v in zip(ys, y):
        if abs(values[k] - v) > 1e-5 * (1 + abs(v)):
            fail(f"{k} = {values[k]} in the result file, the numpy evaluation gives {v}")
    env = dict(values)
    env.update({k: float(v) for k, v in zip(ys, y)})  # the reference's outputs decide the property

    def val(t):
        return env[t] if t in env else float(t)

    for op, a, b in assertions(vnnlib):
        ok = val(a) <= val(b) if op == "<=" else val(a) >= val(b)
        if not ok:
            fail(f"witness violates ({op} {a} {b}): {val(a)} vs {val(b)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--repo", required=True)
    a = ap.parse_args()
    scripts = os.path.join(a.repo, "vnncomp_scripts")
    data = os.path.join(a.repo, "tests", "data", "vnncomp2021_test")
    env = dict(os.environ, DENOTE_CLI=os.path.abspath(a.cli))
    rows = [l.strip().split(",") for l in open(os.path.join(data, "expected.csv")) if l.strip() and l[0] != "#"]
    with tempfile.TemporaryDirectory() as tmp:
        env["DENOTE_VNNCOMP_STATE"] = tmp  # the run's pid file, apart from any other run's
        # Usage errors first: the wrong version and a missing file.
        r = subprocess.run([os.path.join(scripts, "run_instance.sh"), "v2", "test", "a", "b", "c", "1"], env=env,
                           capture_output=True, text=True)
        if r.returncode == 0 or "usage" not in r.stderr:
            fail(f"run_instance.sh v2: expected a usage error, got {r.returncode} {r.stderr!r}")
        r = subprocess.run([os.path.join(scripts, "prepare_instance.sh"), "v1", "test", os.path.join(tmp, "none.onnx"),
                            os.path.join(data, "test_prop.vnnlib")], env=env, capture_output=True, text=True)
        if r.returncode == 0:
            fail("prepare_instance.sh accepted a missing network")
        for onnx_name, vnnlib_name, want in rows:
            onnx_path, vnnlib = os.path.join(data, onnx_name), os.path.join(data, vnnlib_name)
            r = subprocess.run([os.path.join(scripts, "prepare_instance.sh"), "v1", "test", onnx_path, vnnlib], env=env,
                               capture_output=True, text=True)
            if r.returncode != 0 or not r.stdout.startswith("ok:"):
                fail(f"prepare_instance.sh {onnx_name}: exit {r.returncode}: {r.stdout} {r.stderr}")
            out = os.path.join(tmp, onnx_name + ".result")
            r = subprocess.run([os.path.join(scripts, "run_instance.sh"), "v1", "test", onnx_path, vnnlib, out, "60"],
                               env=env, capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"run_instance.sh {onnx_name}: exit {r.returncode}: {r.stderr}")
            text = open(out).read()
            got = text.split("\n", 1)[0].strip()
            if got != want:
                fail(f"{onnx_name} {vnnlib_name}: {got}, published answer {want}")
            if got == "sat":
                check_witness(onnx_path, vnnlib, parse_witness(text))
            print(f"{onnx_name} {vnnlib_name}: {got}")
    print("vnncomp_scripts: every answer as published, the sat witness confirmed by a numpy evaluation")


if __name__ == "__main__":
    main()
