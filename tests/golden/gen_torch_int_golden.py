#!/usr/bin/python3
"""Offline generator of the integer golden tables in tests/data/golden_int/ from PyTorch.

Run with Debian's python3-torch 1.13 (/usr/bin/python3 tests/golden/gen_torch_int_golden.py); the
tables are committed and tests/unit/typed_golden_test.cc compares denote against them. Never run at
test time.

Line format (one case per line, words are lower-case hex of the element bits):
  OP DTYPE A B RESULT      binary integer op; RESULT is a word or "error" (PyTorch raised)
  OP DTYPE A - RESULT      unary op (neg, abs)
  clamp_min DTYPE A BOUND RESULT   torch.clamp_min(x, bound) with a Python int bound
  cast SRC->DST toward-zero|nearest-even A RESULT
Guarded rows: PyTorch 1.13 traps (SIGFPE) on min / -1 and min % -1 for 32- and 64-bit integers, so
those rows are never generated here; the C++ test checks them against the spec instead.
"""
import os
import random
import struct

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "golden_int")

INT_DTYPES = {
    "int8": (torch.int8, 8, True),
    "int16": (torch.int16, 16, True),
    "int32": (torch.int32, 32, True),
    "int64": (torch.int64, 64, True),
    "uint8": (torch.uint8, 8, False),
}

BINARY_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "max": torch.maximum,
    "min": torch.minimum,
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "remainder": torch.remainder,
    "pow": torch.pow,
}
UNARY_OPS = {"neg": torch.neg, "abs": torch.abs}


def bounds(width, signed):
    return (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)


def word(v, width):
    return "0x%x" % (v & ((1 << width) - 1))


def sample_values(width, signed, rng):
    lo, hi = bounds(width, signed)
    edge = [lo, hi, 0, 1, 2, 3, 7, lo + 1, hi - 1]
    if signed:
        edge += [-1, -2, -3, -7]
    rand = [rng.randint(lo, hi) for _ in range(6)] + [rng.randint(-20, 20) for _ in range(3)]
    return [v for v in dict.fromkeys(edge + rand) if lo <= v <= hi]


def traps(name, a, b, width, signed):
    lo, _ = bounds(width, signed)
    return signed and width >= 32 and a == lo and b == -1 and name in ("div_trunc", "div_floor", "remainder")


def one(fn, dtype, *args):
    try:
        return fn(*[torch.tensor([x], dtype=dtype) for x in args]).item()
    except RuntimeError:
        return None


def int_rows(name, spec, rng):
    dtype, width, signed = spec
    vals = sample_values(width, signed, rng)
    rows = []
    for op, fn in UNARY_OPS.items():
        for a in vals:
            rows.append("%s %s %s - %s" % (op, name, word(a, width), word(one(fn, dtype, a), width)))
    for op, fn in BINARY_OPS.items():
        for a in vals:
            for b in vals:
                if traps(op, a, b, width, signed):
                    continue  # guarded: PyTorch traps; the C++ test checks the spec
                r = one(fn, dtype, a, b)
                rows.append("%s %s %s %s %s" % (op, name, word(a, width), word(b, width),
                                                "error" if r is None else word(r, width)))
    for a in vals:
        for b in vals[:8]:
            r = torch.clamp_min(torch.tensor([a], dtype=dtype), b).item()
            rows.append("clamp_min %s %s %s %s" % (name, word(a, width), word(b, width), word(r, width)))
    return rows


FLOAT_DTYPES = {
    "binary32": (torch.float32, lambda x: struct.unpack("<I", struct.pack("<f", x))[0], 32),
    "binary64": (torch.float64, lambda x: struct.unpack("<Q", struct.pack("<d", x))[0], 64),
}


def float_bits(t, fname):
    if fname == "binary16":
        return t.view(torch.int16).item() & 0xFFFF
    if fname == "bfloat16":
        return t.view(torch.int16).item() & 0xFFFF
    if fname == "binary32":
        return t.view(torch.int32).item() & 0xFFFFFFFF
    return t.view(torch.int64).item() & 0xFFFFFFFFFFFFFFFF


TORCH_FLOAT = {"binary16": torch.float16, "bfloat16": torch.bfloat16, "binary32": torch.float32,
               "binary64": torch.float64}


def int_to_float_rows(name, spec, rng):
    dtype, width, signed = spec
    vals = sample_values(width, signed, rng) + [rng.randint(*bounds(width, signed)) for _ in range(20)]
    # int -> binary16/bfloat16 goes through float32 in PyTorch: one rounding only when the int is
    # exact in float32 (widths <= 16 here).
    targets = ["binary32", "binary64"] + (["binary16", "bfloat16"] if width <= 16 else [])
    rows = []
    for fname in targets:
        for a in vals:
            r = torch.tensor([a], dtype=dtype).to(TORCH_FLOAT[fname])
            rows.append("cast %s->%s nearest-even %s %s" % (name, fname, word(a, width), "0x%x" % float_bits(r, fname)))
    return rows


def float_to_int_rows(name, spec, rng):
    dtype, width, signed = spec
    lo, hi = bounds(width, signed)
    xs = [0.0, -0.0, 0.5, -0.5, 0.999, -0.999, 1.5, -1.5, 2.5, -2.5, 7.75, -7.75, 100.25, float(lo), float(hi),
          hi + 0.5, lo - 0.5, 1e-30, -1e-30]
    xs += [rng.uniform(lo, hi) for _ in range(20)] + [rng.uniform(-300.0, 300.0) for _ in range(10)]
    rows = []
    for fname in ["binary32", "binary64", "binary16", "bfloat16"]:
        for x in xs:
            t = torch.tensor([x], dtype=torch.float64).to(TORCH_FLOAT[fname])
            v = t.item()
            if v != v or abs(v) == float("inf"):
                continue
            tv = int(v)  # truncation: PyTorch's float -> int conversion; only in-range rows
            if not (lo <= tv <= hi):
                continue
            r = t.to(dtype).item()
            rows.append("cast %s->%s toward-zero 0x%x %s" % (fname, name, float_bits(t, fname), word(r, width)))
    return rows


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, spec in INT_DTYPES.items():
        rng = random.Random("denote-int-golden-" + name)
        rows = int_rows(name, spec, rng) + int_to_float_rows(name, spec, rng) + float_to_int_rows(name, spec, rng)
        with open(os.path.join(OUT, name + ".txt"), "w") as f:
            f.write("# generated by tests/golden/gen_torch_int_golden.py with torch %s; do not edit\n" % torch.__version__)
            f.write("\n".join(rows) + "\n")
        print(name, len(rows), "rows")


if __name__ == "__main__":
    main()
