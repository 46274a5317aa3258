#!/usr/bin/env python3
"""Compares a `denote verify --instances` results CSV (onnx,vnnlib,result,seconds) with the published
ground truth of VNN-COMP 2021 for ACAS Xu and mnistfc 256x2 (tests/data/{acasxu,mnistfc}/
vnncomp2021_ground_truth.csv, assembled from stanleybak/vnncomp2021_results: `result` is `unsat` where
tools answered holds and none violated, `sat` the reverse, `disputed` where they disagreed, and `vote`
the side the published scoring took: the majority, whose minority answers were scored as wrong).

Prints the counts agreeing with the vote, contradicting it and undecided, and lists every
contradiction; exits 1 when some answer contradicts it.

  bench/check_truth.py /tmp/denote_verify_bench/acasxu.results.csv
"""
import csv
import os
import sys


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    truth = {}
    for bench in ("acasxu", "mnistfc"):
        with open(os.path.join(root, "tests/data", bench, "vnncomp2021_ground_truth.csv")) as f:
            for row in csv.DictReader(f):
                truth[(row["onnx"], row["vnnlib"])] = (row["result"], row["vote"])
    agree = disagree = undecided = unknown_instance = 0
    bad = []
    with open(argv[1]) as f:
        for row in csv.reader(f):
            if len(row) < 3:
                continue
            key = (os.path.basename(row[0]), os.path.basename(row[1]))
            if key not in truth:
                unknown_instance += 1
                continue
            want, expected = truth[key]
            got = row[2]
            if got not in ("sat", "unsat"):
                undecided += 1
            elif got == expected:
                agree += 1
            else:
                disagree += 1
                bad.append(f"{key[0]} {key[1]}: denote {got}, published {want} (vote {expected})")
    print(f"agree {agree}, contradict {disagree}, undecided {undecided}, not in the ground truth {unknown_instance}")
    for b in bad:
        print("CONTRADICTION", b)
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
