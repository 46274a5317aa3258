#!/usr/bin/python3
"""PyTorch side of the f32 evaluation benchmark (bench/compare_pytorch.sh).

Times the same three workloads as bench/eval_bench.cc, in float32 under torch.no_grad():
  mlp_b1     5-50x6-5 ReLU MLP (ACAS Xu size), input [5]
  mlp_b1024  the same MLP, input [1024, 5]
  cnn_b64    conv 3x3 1->16, relu, conv 3x3 16->32, relu, reshape [64, 18432], linear 10; input [64, 1, 28, 28]
             (stride 1, no padding)
Each workload is timed with time.perf_counter over a block of calls sized to last at least
--min-time seconds; the block is repeated --repeat times and the best per-call time is kept.

Output: one machine-readable line per workload,
  torch workload=<name> threads=<n> seconds_per_call=<s> items_per_second=<x> calls=<k>

Usage: /usr/bin/python3 bench/torch_bench.py [--threads N] [--repeat R] [--min-time S] [--only NAME]
Run with Debian's python3-torch (1.13).
"""

import argparse
import os
import time

import torch

MLP_HIDDEN_LAYERS = 6
MLP_WIDTH = 50
MLP_IN = 5
MLP_OUT = 5


def make_mlp():
    layers = [torch.nn.Linear(MLP_IN, MLP_WIDTH), torch.nn.ReLU()]
    for _ in range(MLP_HIDDEN_LAYERS - 1):
        layers += [torch.nn.Linear(MLP_WIDTH, MLP_WIDTH), torch.nn.ReLU()]
    layers.append(torch.nn.Linear(MLP_WIDTH, MLP_OUT))
    return torch.nn.Sequential(*layers)


class SmallCnn(torch.nn.Module):
    def __init__(self, batch):
        super().__init__()
        self.batch = batch
        self.conv1 = torch.nn.Conv2d(1, 16, 3)
        self.conv2 = torch.nn.Conv2d(16, 32, 3)
        self.fc = torch.nn.Linear(32 * 24 * 24, 10)

    def forward(self, x):
        h = torch.relu(self.conv1(x))
        h = torch.relu(self.conv2(h))
        return self.fc(h.reshape(self.batch, 32 * 24 * 24))


def workloads():
    """(name, module, input, items per call)."""
    mlp = make_mlp().float().eval()
    cnn = SmallCnn(64).float().eval()
    return [
        ("mlp_b1", mlp, torch.rand(MLP_IN) * 2 - 1, 1),
        ("mlp_b1024", mlp, torch.rand(1024, MLP_IN) * 2 - 1, 1024),
        ("cnn_b64", cnn, torch.rand(64, 1, 28, 28), 64),
    ]


def time_block(module, x, calls):
    start = time.perf_counter()
    for _ in range(calls):
        module(x)
    return time.perf_counter() - start


def best_seconds_per_call(module, x, repeat, min_time):
    """Sizes a block of calls to last >= min_time, then returns the best per-call time of `repeat` blocks."""
    time_block(module, x, 3)  # warm-up: allocator, oneDNN primitive caches, BLAS threads
    calls = 1
    while True:
        elapsed = time_block(module, x, calls)
        if elapsed >= min_time:
            break
        calls = max(calls * 2, int(calls * min_time / max(elapsed, 1e-9) * 1.2))
    best = elapsed / calls
    for _ in range(repeat - 1):
        best = min(best, time_block(module, x, calls) / calls)
    return best, calls


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="torch.set_num_threads (default: all)")
    parser.add_argument("--repeat", type=int, default=5, help="timed blocks per workload; the best is kept")
    parser.add_argument("--min-time", type=float, default=0.3, help="seconds per timed block")
    parser.add_argument("--only", default="", help="run only this workload")
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    print(f"# torch {torch.__version__}, threads={torch.get_num_threads()}, "
          f"mkldnn={torch.backends.mkldnn.is_available()}", flush=True)
    with torch.no_grad():
        for name, module, x, items in workloads():
            if args.only and name != args.only:
                continue
            seconds, calls = best_seconds_per_call(module, x, args.repeat, args.min_time)
            print(f"torch workload={name} threads={args.threads} seconds_per_call={seconds:.9g} "
                  f"items_per_second={items / seconds:.6g} calls={calls}", flush=True)


if __name__ == "__main__":
    main()
