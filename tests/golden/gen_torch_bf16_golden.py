#!/usr/bin/python3
"""Offline generator of tests/data/golden_bf16/ from PyTorch's bfloat16 CPU kernels.

Run with Debian's python3-torch 1.13 and the built module:
  PYTHONPATH=build/python /usr/bin/python3 tests/golden/gen_torch_bf16_golden.py
For each network: NAME.json (the float32 module captured by denote.from_torch), NAME.x.npy (the
float32 input) and NAME.torch_bf16.npy (module.to(torch.bfloat16)(x.to(torch.bfloat16)) widened to
float32: every bfloat16 value is a float32). tests/python/test_policy.py checks that denote's precision
policy (arith="bfloat16", accumulate="binary32") gives these bits without torch. Never run at test time.
"""
import os

import numpy as np
import torch

import denote

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "golden_bf16")
nn = torch.nn


def nets():
    yield "mlp", nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)), (16, 32)
    yield "cnn", nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 8, 4, stride=2), nn.ReLU(),
                               nn.Flatten(), nn.Linear(8 * 5 * 5, 10)), (4, 3, 12, 12)
    yield "act", nn.Sequential(nn.Linear(16, 24), nn.Tanh(), nn.Linear(24, 24), nn.GELU(), nn.Linear(24, 6),
                               nn.Sigmoid()), (16, 16)
    bn = nn.BatchNorm2d(6)
    bn.running_mean.uniform_(-0.5, 0.5)
    bn.running_var.uniform_(0.5, 2.0)
    bn.weight.data.uniform_(0.5, 1.5)
    bn.bias.data.uniform_(-0.2, 0.2)
    yield "bn_pool", nn.Sequential(nn.Conv2d(3, 6, 3), bn, nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(),
                                   nn.Linear(6 * 5 * 5, 10)), (4, 3, 12, 12)
    yield "softmax", nn.Sequential(nn.Linear(16, 20), nn.Softmax(dim=-1)), (16, 16)


def main():
    torch.manual_seed(20261207)
    os.makedirs(OUT, exist_ok=True)
    for name, net, shape in nets():
        net = net.eval()
        x = torch.randn(*shape)
        m = denote.from_torch(net, (x,))
        m.to_json(os.path.join(OUT, name + ".json"))
        with torch.no_grad():
            y = net.to(torch.bfloat16)(x.to(torch.bfloat16)).float().numpy()
        np.save(os.path.join(OUT, name + ".x.npy"), x.numpy())
        np.save(os.path.join(OUT, name + ".torch_bf16.npy"), y)
        print(name, y.shape)


if __name__ == "__main__":
    main()
