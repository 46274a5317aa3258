"""Shared by the auto_LiRPA side-by-side benches (lirpa_lp.py, lirpa_batch.py): the argument for auto_LiRPA's
checkout, its import next to tests/golden's network loaders at one thread, and best-of-n timing."""
import argparse
import os
import sys
import time
from types import SimpleNamespace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parser(doc):
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--lirpa", default=os.path.join(ROOT, "..", "shared", "peers", "auto_LiRPA"),
                    help="auto_LiRPA checkout (the directory holding auto_LiRPA/)")
    return ap


def load(lirpa):
    """torch (one thread), auto_LiRPA's BoundedModule / BoundedTensor / PerturbationLpNorm, the golden loaders."""
    sys.path.insert(0, os.path.abspath(lirpa))
    sys.path.insert(0, os.path.join(ROOT, "tests", "golden"))
    import torch
    from auto_LiRPA import BoundedModule, BoundedTensor
    from auto_LiRPA.perturbations import PerturbationLpNorm
    import gen_lirpa_golden as golden
    torch.set_num_threads(1)
    return SimpleNamespace(torch=torch, BoundedModule=BoundedModule, BoundedTensor=BoundedTensor,
                           PerturbationLpNorm=PerturbationLpNorm, golden=golden)


def best(f, n=5):
    """f's last result and its fastest time of n runs."""
    out, ts = None, []
    for _ in range(n):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return out, min(ts)
