#!/usr/bin/env python3
"""Exports models with `denote convert` and checks them with onnx.checker.check_model(full_check=True).

Models: the 45 ACAS Xu networks (ONNX -> JSON -> ONNX), every PyTorch golden case under
tests/data/golden/ whose ops have ONNX counterparts (JSON -> ONNX; convert fails cleanly for the
others and those are skipped with their error), and a model built here with the ONNX ops that import
to issue 18's IR ops (gather, floor, ceil, round, sign), which must also re-import to the identical
IR (import(export(m)) == m, compared as torchlean.ir.v1 JSON). Exits 77 (CTest skip) when python3-onnx is not
importable. Usage: check_export.py DENOTE_CLI SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile

try:
    import onnx
except ImportError:
    print("check_export: python3-onnx is not importable; skipped")
    sys.exit(77)


def convert(cli, src, dst):
    r = subprocess.run([cli, "convert", src, dst], capture_output=True, text=True)
    return r.returncode, r.stderr.strip()


def new_ops_model(path):
    """Slice, Gather, Pad (reflect), Split, Floor, Ceil, Round, Sign -> gather and the step ops."""
    from onnx import TensorProto, helper
    ints = lambda name, v: helper.make_tensor(name, TensorProto.INT64, [len(v)], v)  # noqa: E731
    nodes = [
        helper.make_node("Slice", ["x", "s0", "s1", "s2", "s3"], ["a"]),
        helper.make_node("Gather", ["a", "gi"], ["b"], axis=1),
        helper.make_node("Pad", ["b", "pads"], ["c"], mode="reflect"),
        helper.make_node("Floor", ["c"], ["d"]),
        helper.make_node("Ceil", ["d"], ["e"]),
        helper.make_node("Round", ["e"], ["f"]),
        helper.make_node("Sign", ["f"], ["y"]),
        helper.make_node("Split", ["x", "sp"], ["z0", "z1"], axis=1),
    ]
    inits = [ints("s0", [3]), ints("s1", [-100]), ints("s2", [1]), ints("s3", [-1]), ints("gi", [0, 2, 2, 1]),
             ints("pads", [0, 1, 0, 2]), ints("sp", [2, 3])]
    g = helper.make_graph(nodes, "new_ops", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 5])],
                          [helper.make_tensor_value_info(n, TensorProto.DOUBLE, None) for n in ("y", "z0", "z1")],
                          inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def check_new_ops(cli, tmp, failures):
    src = os.path.join(tmp, "new_ops.onnx")
    new_ops_model(src)
    first, out, second = (os.path.join(tmp, n) for n in ("new_ops.json", "new_ops.out.onnx", "new_ops.back.json"))
    for a, b in ((src, first), (first, out), (out, second)):
        code, err = convert(cli, a, b)
        if code != 0:
            failures.append(f"new_ops: convert {os.path.basename(a)} failed: {err}")
            return 0
    try:
        onnx.checker.check_model(onnx.load(out), full_check=True)
    except Exception as e:  # noqa: BLE001
        failures.append(f"new_ops: {e}")
        return 0
    kinds = open(first).read()
    for kind in ("gather", "floor", "ceil", "round", "sign"):
        if f'"{kind}"' not in kinds:
            failures.append(f"new_ops: the import has no {kind} node")
    if open(first).read() != open(second).read():
        failures.append("new_ops: import(export(m)) differs from m")
    return 1


def main():
    cli, root = sys.argv[1], sys.argv[2]
    checked, skipped, failures = 0, [], []
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        acas = os.path.join(root, "tests", "data", "acasxu")
        for f in sorted(os.listdir(acas)):
            if f.endswith(".onnx"):
                mid = os.path.join(tmp, f + ".json")
                code, err = convert(cli, os.path.join(acas, f), mid)
                if code != 0:
                    failures.append(f"{f}: import failed: {err}")
                    continue
                jobs.append((f, mid))
        golden = os.path.join(root, "tests", "data", "golden")
        for case in sorted(os.listdir(golden)):
            model = os.path.join(golden, case, "model.json")
            if os.path.exists(model):
                jobs.append((case, model))
        for name, src in jobs:
            dst = os.path.join(tmp, name + ".out.onnx")
            code, err = convert(cli, src, dst)
            if code != 0:
                if "onnx export:" in err:
                    skipped.append(name)
                else:
                    failures.append(f"{name}: convert failed: {err}")
                continue
            try:
                onnx.checker.check_model(onnx.load(dst), full_check=True)
                checked += 1
            except Exception as e:  # noqa: BLE001 - report every checker complaint
                failures.append(f"{name}: {e}")
        checked += check_new_ops(cli, tmp, failures)
    print(f"check_export: {checked} exported models pass check_model(full_check=True); "
          f"{len(skipped)} not exportable: {', '.join(skipped)}")
    for f in failures:
        print("FAIL", f)
    return 1 if failures or checked < 100 else 0


if __name__ == "__main__":
    sys.exit(main())
