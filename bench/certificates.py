#!/usr/bin/env python3
"""Certificates on a VNN-COMP benchmark (issue 52, docs/CERTIFICATES.md): for every CSV line, `denote verify`
without and with --certificate, then `denote check-certificate` on each unsat answer's certificate.
Prints one line per instance and a summary: answers, valid certificates, verify time with and without
writing the certificate, checking time, certificate sizes. Instances run `--jobs` at a time, one thread each.

  bench/certificates.py ../shared/data/acasxu/acasxu_instances.csv --denote build/bin/denote --cap 116
"""
import argparse
import concurrent.futures as cf
import csv
import json
import os
import subprocess
import tempfile
import time


def run(cmd):
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p, time.monotonic() - t


def one(args, root, onnx, vnnlib, timeout):
    base = [args.denote, "verify", os.path.join(root, onnx), os.path.join(root, vnnlib), "--timeout", str(timeout),
            "--threads", "1", "--json"]
    plain, _ = run(base)
    try:
        r0 = json.loads(plain.stdout)
    except json.JSONDecodeError:
        return {"name": f"{onnx},{vnnlib}", "error": plain.stderr.strip()}
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        cert, _ = run(base + ["--certificate", path])
        r1 = json.loads(cert.stdout) if cert.stdout.strip().startswith("{") else {"result": "error"}
        out = {"name": f"{onnx},{vnnlib}", "plain": r0["result"], "plain_s": r0["time_s"], "cert": r1["result"],
               "cert_s": r1.get("time_s", 0), "bytes": 0, "valid": None, "check_s": 0, "why": ""}
        if r1["result"] == "unsat":
            out["bytes"] = os.path.getsize(path) if cert.returncode == 0 else 0
            if cert.returncode != 0:
                out["valid"], out["why"] = False, cert.stderr.strip()
            else:
                for a in args.check_arith.split(","):
                    chk, wall = run([args.denote, "check-certificate", os.path.join(root, onnx), os.path.join(root, vnnlib),
                                     path, "--json", "--arith", a])
                    try:
                        rep = json.loads(chk.stdout)
                        ok, secs, why = rep["valid"], rep["time_s"], rep["failure"]
                    except json.JSONDecodeError:
                        ok, secs, why = False, 0, chk.stderr.strip()
                    out.setdefault("by_arith", {})[a] = (ok, secs, why)
                first = out["by_arith"][args.check_arith.split(",")[0]]
                out["valid"], out["check_s"], out["why"] = first
        return out
    finally:
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--denote", default="build/bin/denote")
    ap.add_argument("--root", default=None, help="directory the CSV's paths are relative to (default: the CSV's)")
    ap.add_argument("--cap", type=float, default=None, help="timeouts capped at this many seconds")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--every", type=int, default=1, help="every k-th line only")
    ap.add_argument("--check-arith", default="real", help="check-certificate --arith values, comma-separated (real,f32)")
    args = ap.parse_args()
    root = args.root or os.path.dirname(os.path.abspath(args.csv))
    with open(args.csv) as f:
        rows = [r for r in csv.reader(f) if len(r) >= 3][:: args.every]
    todo = [(r[0].strip(), r[1].strip(), min(float(r[2]), args.cap) if args.cap else float(r[2])) for r in rows]
    results = []
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for r in ex.map(lambda t: one(args, root, *t), todo):
            results.append(r)
            if "error" in r:
                print(f"{r['name']}: error {r['error']}", flush=True)
                continue
            checks = "".join(f"; {a}: {'valid' if v[0] else 'INVALID ' + v[2]} in {v[1]:.3f} s"
                             for a, v in r.get("by_arith", {}).items())
            print(f"{r['name']}: {r['plain']} {r['plain_s']:.2f} s | with certificate {r['cert']} {r['cert_s']:.2f} s"
                  + (f", {r['bytes']} bytes{checks or ', INVALID ' + r['why']}" if r["cert"] == "unsat" else ""), flush=True)
    ok = [r for r in results if "error" not in r]
    unsat = [r for r in ok if r["cert"] == "unsat"]
    valid = [r for r in unsat if r["valid"]]
    both = [r for r in ok if r["plain"] == "unsat" and r["cert"] == "unsat"]
    print(f"instances {len(results)}; unsat without certificate {sum(r['plain'] == 'unsat' for r in ok)}, with "
          f"{len(unsat)}; certificates valid {len(valid)} of {len(unsat)}")
    if both:
        p, c = sum(r["plain_s"] for r in both), sum(r["cert_s"] for r in both)
        print(f"on the {len(both)} unsat both ways: verify {p:.1f} s without, {c:.1f} s with the certificate "
              f"({100 * (c / p - 1):+.1f}%); checking {sum(r['check_s'] for r in both):.1f} s; "
              f"certificates {sum(r['bytes'] for r in both) / 1e6:.1f} MB (largest {max(r['bytes'] for r in both) / 1e6:.2f} MB)")
    for a in args.check_arith.split(","):
        got = [r["by_arith"][a] for r in unsat if a in r.get("by_arith", {})]
        print(f"check-certificate --arith {a}: {sum(v[0] for v in got)} of {len(unsat)} valid, {sum(v[1] for v in got):.1f} s")
    changed = [r["name"] for r in ok if r["plain"] != r["cert"]]
    if changed:
        print("answers that differ with --certificate: " + "; ".join(changed))


if __name__ == "__main__":
    main()
