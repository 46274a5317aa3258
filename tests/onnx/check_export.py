#!/usr/bin/env python3
"""Exports models with `denote convert` and checks them with onnx.checker.check_model(full_check=True).

Models: the 45 ACAS Xu networks (ONNX -> JSON -> ONNX) and every PyTorch golden case under
tests/data/golden/ whose ops have ONNX counterparts (JSON -> ONNX; convert fails cleanly for the
others and those are skipped with their error). Exits 77 (CTest skip) when python3-onnx is not
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
    print(f"check_export: {checked} exported models pass check_model(full_check=True); "
          f"{len(skipped)} not exportable: {', '.join(skipped)}")
    for f in failures:
        print("FAIL", f)
    return 1 if failures or checked < 100 else 0


if __name__ == "__main__":
    sys.exit(main())
