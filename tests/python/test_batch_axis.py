"""A leading batch axis for Model.run and Model.grad (python/denote/_batch.py): on a model captured at batch 1,
an [N, *sample] array runs each sample as its own call, the results stacked (flags or-ed, parameter gradients
summed), equal to the separate calls and, where torch is there, to torch's own batched forward and backward."""
import numpy as np
import pytest

import denote


def test_run_and_grad_of_a_batch_are_the_samples_calls(acas_path):
    m = denote.load(acas_path)
    xs = np.random.default_rng(0).uniform(-0.5, 0.5, (5, 1, 1, 5))
    y = m.run(xs)
    assert y.shape == (5, 5)
    for i in range(5):
        np.testing.assert_array_equal(y[i], np.asarray(m.run(xs[i:i + 1])).ravel())
    y32, flags = m.run(xs, arith="bfloat16", return_flags=True)
    one_flags = [m.run(xs[i:i + 1], arith="bfloat16", return_flags=True)[1] for i in range(5)]
    assert flags == {k: any(f[k] for f in one_flags) for k in flags}
    every = m.run(xs, all_nodes=True)
    assert sorted(every) == [n["id"] for n in m.nodes] and every[m.outputs[0]].shape == (5, 5)
    g = m.grad(xs)
    assert g.shape == xs.shape
    for i in range(5):
        np.testing.assert_array_equal(g[i], m.grad(xs[i:i + 1])[0])
    cot = np.random.default_rng(1).standard_normal((5, 5))  # one per sample: [N, *output without its leading 1]
    gc = m.grad(xs, cotangent=cot)
    np.testing.assert_array_equal(gc[3], m.grad(xs[3:4], cotangent=cot[3:4])[0])
    gp = m.grad(xs, wrt="params")
    singles = [m.grad(xs[i:i + 1], wrt="params") for i in range(5)]
    for key in gp:
        np.testing.assert_allclose(gp[key], sum(np.asarray(s[key]) for s in singles), rtol=1e-12, atol=1e-15)
    gi, gq = m.grad(xs, wrt="all")
    np.testing.assert_array_equal(gi, g)
    for key in gq:
        np.testing.assert_allclose(gq[key], gp[key], rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="one cotangent per sample"):
        m.grad(xs, cotangent=cot[:2])
    with pytest.raises(denote.Error):  # not a batch of samples: the input's own shape check
        m.run(np.zeros((5, 1, 1, 4)))


def test_a_batch_matches_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    m = denote.from_torch(net, (torch.zeros(1, 6, dtype=torch.float64),))
    xs = torch.randn(7, 6, dtype=torch.float64, requires_grad=True)
    y = net(xs)
    np.testing.assert_allclose(m.run(xs.detach().numpy()), y.detach().numpy(), rtol=1e-12, atol=1e-14)
    y.sum().backward()
    np.testing.assert_allclose(m.grad(xs.detach()), xs.grad.numpy(), rtol=1e-12, atol=1e-14)  # a torch tensor in
    net.zero_grad()
    net(xs).sum().backward()
    params = m.grad(xs.detach().numpy(), wrt="params")  # summed over the batch, as torch's backward of the sum
    got = sorted((np.asarray(v).size, float(np.sum(np.abs(v)))) for v in params.values())
    want = sorted((p.grad.numel(), float(p.grad.abs().sum())) for p in net.parameters())
    np.testing.assert_allclose([w for _, w in got], [w for _, w in want], rtol=1e-10)
