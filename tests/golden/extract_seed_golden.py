#!/usr/bin/env python3
"""Extracts the texts `denote demo` must reproduce from the seed document (the system's source text),
so the demo golden test compares against the seed itself rather than against our own output.

Usage: tests/golden/extract_seed_golden.py [SEED] > tests/golden/seed_demo_expected.txt
Each output line is one line that must appear verbatim (after stripping indentation) in the demo.
"""
import re
import sys

DEFAULT_SEED = "../shared/seeds/000_51c49c3d0318e945.txt"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SEED
    text = open(path, encoding="utf-8").read()
    lines = text.splitlines()
    out = []
    # 1. The listing: lines like "0: input parents=[] out=[4]".
    out += [l for l in lines if re.match(r"^\d+: \S.* parents=\[.*\] out=\[.*\]$", l)]
    # 2. The GraphViz block, from "digraph IR {" to the closing brace.
    start = lines.index("digraph IR {")
    end = lines.index("}", start)
    out += [l.strip() for l in lines[start:end + 1]]
    # 3. Every error text the seed shows (check results and the payload mismatch).
    out += re.findall(r'Except\.error "(.*)"', text)
    # 4. The value table at x0: the strings inside Except.ok #["...", ...].
    m = re.search(r'Except\.ok #\[("\[0\.300000.*?)\]\n', text, re.S)
    if not m:
        sys.exit("value table not found in the seed")
    out += re.findall(r'"([^"]*)"', m.group(1))
    # 5. The axis-ops tutorial's output-shape lines.
    out += [l for l in lines if re.match(r"^\[\w+_middle_axis\] output shape: \[.*\]$", l)]
    # 6. The IBP boxes of nodes 0..4 (node 5 differs on purpose: the seed's global tanh rule gives
    #    [-1, 1], ours is the tight monotone rule).
    out += [l for l in lines if re.match(r"^node [0-4]: \[.*\] \.\. \[.*\]$", l)]
    print("\n".join(out))


if __name__ == "__main__":
    main()
