"""auto_LiRPA's compute_bounds flags on Model.bounds: C (the spec), bound_lower / bound_upper (one side, the
other None) and return_A (the linear bounds in the input, lA x + lbias <= C y <= uA x + ubias on the box),
checked against the two-sided bounds and against the network evaluated at points of the box."""
import os

import numpy as np
import pytest

import denote

LO = np.array([[[[0.6, -0.5, -0.5, 0.45, -0.5]]]])
HI = np.array([[[[0.68, 0.5, 0.5, 0.5, -0.45]]]])
SPEC = np.array([[1.0, -1, 0, 0, 0], [1, 0, -1, 0, 0], [0, 0, 0, 1, -1]])


def points(n, seed=0):
    rng = np.random.default_rng(seed)
    corners = [np.where((np.arange(5) >> k) & 1 == 1, HI.ravel(), LO.ravel()) for k in range(5)]
    inner = [LO.ravel() + rng.uniform(0, 1, 5) * (HI - LO).ravel() for _ in range(n)]
    return corners + inner


@pytest.mark.parametrize("method", ["crown", "alpha-crown"])
def test_one_side_is_the_two_sided_bound(acas_path, method):
    m = denote.load(acas_path)
    for spec in (None, SPEC):
        lo, hi = m.bounds(LO, HI, method=method, spec=spec, alpha_iters=5)
        lo_only, none_hi = m.bounds(LO, HI, method=method, C=spec, bound_upper=False, alpha_iters=5)
        none_lo, hi_only = m.bounds(LO, HI, method=method, C=spec, bound_lower=False, alpha_iters=5)
        assert none_hi is None and none_lo is None
        assert lo_only.shape == lo.shape and hi_only.shape == hi.shape
        tol = 1e-9 if method == "crown" else 1e-3  # alpha-CROWN's steps see other rows beside them
        np.testing.assert_allclose(lo_only, lo, rtol=tol, atol=tol)
        np.testing.assert_allclose(hi_only, hi, rtol=tol, atol=tol)


@pytest.mark.parametrize("method", ["CROWN", "alpha-CROWN"])
@pytest.mark.parametrize("arith", ["f64", "f32"])
def test_return_A_encloses_the_network(acas_path, arith, method):
    """alpha-CROWN: each row's coefficients are those of the step that gave its best bound (auto_LiRPA's
    return_A on its optimised bound), so the same checks hold, and its bounds are CROWN's or tighter."""
    m = denote.load(acas_path)
    for spec in (None, SPEC):
        lb, ub, A = m.bounds(LO, HI, method=method, C=spec, return_A=True, arith=arith)
        if method == "alpha-CROWN":
            clb, cub = m.bounds(LO, HI, method="CROWN", C=spec, arith=arith, bound_upper=True)
            assert np.all(lb >= clb.ravel() - 1e-12) and np.all(ub <= cub.ravel() + 1e-12)
        rows = len(SPEC) if spec is not None else 5
        assert A["lA"].shape == (rows, 1, 1, 1, 5) and A["uA"].shape == (rows, 1, 1, 1, 5)
        lA, uA = A["lA"].reshape(rows, 5), A["uA"].reshape(rows, 5)
        lbias, ubias = A["lbias"].ravel(), A["ubias"].ravel()
        c = np.eye(5) if spec is None else spec
        for x in points(200):
            y = c @ np.asarray(m.run(x.reshape(LO.shape)), dtype=np.float64).ravel()
            slack = 1e-9 * (1 + np.abs(y))  # numpy's own rounding of the dot products
            assert np.all(lA @ x + lbias <= y + slack), (x, lA @ x + lbias - y)
            assert np.all(y <= uA @ x + ubias + slack), (x, y - uA @ x - ubias)
        if spec is not None:  # the bound is the linear function's minimum over the box (up to its rounding)
            lo_lin = np.minimum(lA * LO.ravel(), lA * HI.ravel()).sum(axis=1) + lbias
            hi_lin = np.maximum(uA * LO.ravel(), uA * HI.ravel()).sum(axis=1) + ubias
            assert np.all(lo_lin <= lb + 1e-12) and np.all(hi_lin >= ub - 1e-12)
            np.testing.assert_allclose(lo_lin, lb, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(hi_lin, ub, rtol=1e-9, atol=1e-9)


def test_return_A_one_side_and_errors(acas_path):
    m = denote.load(acas_path)
    lb, ub, A = m.bounds(LO, HI, method="crown", spec=SPEC, return_A=True, bound_upper=False)
    assert ub is None and A["uA"] is None and A["ubias"] is None and A["lA"].shape == (3, 1, 1, 1, 5)
    with pytest.raises(denote.InvalidInputError, match="method"):
        m.bounds(LO, HI, method="ibp", bound_lower=False)
    with pytest.raises(denote.InvalidInputError, match="nothing to bound"):
        m.bounds(LO, HI, method="crown", bound_lower=False, bound_upper=False)
    with pytest.raises(denote.InvalidInputError, match="C and spec"):
        m.bounds(LO, HI, method="crown", C=SPEC, spec=SPEC)


def ball_points(x0, eps, p, n, seed=1):
    """Points of the Lp ball around x0 (flat): its extreme points along each axis and random ones inside."""
    rng = np.random.default_rng(seed)
    d = x0.size
    pts = [x0 + eps * s * np.eye(d)[i] for i in range(d) for s in (1, -1)]
    for _ in range(n):
        v = rng.standard_normal(d) if p == 2 else rng.laplace(size=d)
        v *= eps / np.linalg.norm(v, ord=p) * rng.uniform(0.5, 1.0)
        pts.append(x0 + v)
    return pts


@pytest.mark.parametrize("p", [2, 1])
def test_lp_balls_are_bounded_soundly_and_tighter_than_their_box(acas_path, p):
    """norm=2 / norm=1: the bounds hold at points of the ball (its axis extremes included) and CROWN's are at
    least as tight as those of the ball's bounding box (norm=inf), strictly somewhere."""
    m = denote.load(acas_path)
    x0, eps = ((LO + HI) / 2), 0.02
    lb, ub = m.bounds(x0, eps=eps, norm=p, method="crown")
    lb_box, ub_box = m.bounds(x0, eps=eps, method="crown")
    assert lb.shape == lb_box.shape == (1, 5)
    assert np.all(lb >= lb_box) and np.all(ub <= ub_box)
    assert np.any(lb > lb_box + 1e-9) or np.any(ub < ub_box - 1e-9)
    for x in ball_points(x0.ravel(), eps, p, 300):
        y = np.asarray(m.run(x.reshape(LO.shape)), dtype=np.float64)
        assert np.all(lb <= y) and np.all(y <= ub), (x, lb - y, y - ub)
    # With a spec and one side only, the same ball minimum.
    slo, shi = m.bounds(x0, eps=eps, norm=p, method="crown", C=SPEC, bound_upper=False)
    assert shi is None
    for x in ball_points(x0.ravel(), eps, p, 100, seed=2):
        y = SPEC @ np.asarray(m.run(x.reshape(LO.shape)), dtype=np.float64).ravel()
        assert np.all(slo <= y)
    # ibp and alpha-crown bound the ball's box.
    np.testing.assert_array_equal(m.bounds(x0, eps=eps, norm=p)[0], m.bounds(x0, eps=eps)[0])


@pytest.mark.parametrize("method", ["ibp", "crown", "alpha-crown"])
def test_a_batch_is_bounded_as_its_samples_one_by_one(acas_path, method):
    """auto_LiRPA's leading batch axis: x of shape [N, 1, 1, 5] (the input [1, 1, 1, 5] without its leading 1),
    one eps per sample, C shared or per sample; each sample's bounds are those of its own call (the model is
    prepared once for the batch: its linear sums may round in another order, both sound)."""
    m = denote.load(acas_path)
    rng = np.random.default_rng(5)
    n = 4
    xs = (LO + rng.uniform(0, 1, (n,) + LO.shape[1:]) * (HI - LO)).reshape(n, 1, 1, 5)
    eps = np.array([0.01, 0.02, 0.005, 0.03])
    kw = dict(method=method, alpha_iters=5)
    lb, ub = m.bounds(xs, eps=eps, **kw)
    assert lb.shape == ub.shape == (n, 5)
    cs = rng.standard_normal((n, 2, 5))
    slb, sub = m.bounds(xs, eps=eps, C=cs, **kw)
    shared = m.bounds(xs, eps=0.01, C=SPEC, **kw)
    assert slb.shape == (n, 2) and shared[0].shape == (n, 3)
    for i in range(n):
        one = m.bounds(xs[i][None], eps=float(eps[i]), **kw)
        np.testing.assert_allclose(lb[i], one[0].ravel(), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ub[i], one[1].ravel(), rtol=1e-9, atol=1e-12)
        spec_one = m.bounds(xs[i][None], eps=float(eps[i]), C=cs[i], **kw)
        np.testing.assert_allclose(slb[i], spec_one[0], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(sub[i], spec_one[1], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(shared[0][i], m.bounds(xs[i][None], eps=0.01, C=SPEC, **kw)[0], rtol=1e-9, atol=1e-12)
        y = np.asarray(m.run(xs[i][None]), dtype=np.float64).ravel()
        assert np.all(lb[i] <= y) and np.all(y <= ub[i])
    # Boxes: lo and hi with the batch axis.
    blo, bhi = m.bounds(xs - 0.01, xs + 0.01, **kw)
    assert blo.shape == (n, 5) and np.all(blo <= bhi)


def test_a_batch_with_one_side_and_return_A(acas_path):
    """bound_lower / bound_upper / return_A on a batch: each sample's results as its own call's, stacked
    (lA [N, rows, 1, 1, 5]: the input without its leading 1, as auto_LiRPA shapes it)."""
    m = denote.load(acas_path)
    rng = np.random.default_rng(6)
    n = 3
    xs = (LO + rng.uniform(0, 1, (n,) + LO.shape[1:]) * (HI - LO)).reshape(n, 1, 1, 5)
    lb, ub, A = m.bounds(xs, eps=0.01, method="crown", C=SPEC, return_A=True)
    assert lb.shape == ub.shape == (n, 3) and A["lA"].shape == (n, 3, 1, 1, 5) and A["ubias"].shape == (n, 3)
    only_lo, none_hi = m.bounds(xs, eps=0.01, method="crown", bound_upper=False)
    assert none_hi is None and only_lo.shape == (n, 5)
    for i in range(n):
        one = m.bounds(xs[i][None], eps=0.01, method="crown", C=SPEC, return_A=True)
        np.testing.assert_array_equal(lb[i], one[0])
        np.testing.assert_array_equal(A["lA"][i], one[2]["lA"].reshape(3, 1, 1, 5))
        np.testing.assert_array_equal(A["ubias"][i], one[2]["ubias"])
        np.testing.assert_array_equal(only_lo[i], m.bounds(xs[i][None], eps=0.01, method="crown",
                                                           bound_upper=False)[0].ravel())


def test_batch_refusals(acas_path):
    m = denote.load(acas_path)
    xs = np.repeat((LO + HI) / 2, 3, axis=0).reshape(3, 1, 1, 5)
    with pytest.raises(denote.InvalidInputError, match="one, or one per sample"):
        m.bounds(xs, eps=np.array([0.1, 0.2]), method="crown")
    with pytest.raises(denote.InvalidInputError, match="not all_nodes"):
        m.bounds(xs, eps=0.1, method="crown", all_nodes=True, return_A=True)
    with pytest.raises(denote.InvalidInputError, match="C of shape"):
        m.bounds(xs, eps=0.1, method="crown", C=np.ones((2, 2, 5)))
    with pytest.raises(denote.InvalidInputError, match="one radius per sample goes with a batch"):
        m.bounds((LO + HI) / 2, eps=np.array([0.1]), method="crown")


def test_a_crown_fallback_to_ibp_is_warned():
    """A weight that f32 rounds into its subnormal range leaves CROWN's error model: the bounds are IBP's
    (sound), and Python says so instead of returning them silently."""
    b = denote.GraphBuilder()
    x = b.input([2])
    y = b.op("relu", b.linear(x, np.array([[1.0, 1e-40], [0.5, -1.0]]), np.zeros(2)))
    m = b.build([b.linear(y, np.array([[1.0, -1.0]]), np.zeros(1))])
    lo, hi = np.zeros(2), np.ones(2)
    with pytest.warns(UserWarning, match=r"the linear bounds are IBP's: a parameter leaves .*weight\[1\]"):
        clo, chi = m.bounds(lo, hi, method="crown", arith="f32")
    ilo, ihi = m.bounds(lo, hi, method="ibp", arith="f32")
    np.testing.assert_array_equal(clo, ilo)
    np.testing.assert_array_equal(chi, ihi)


def test_a_cnn_batch_is_one_ibp_pass(data_dir):
    """IBP of a batch on marabou-cifar10's small CNN (permute, conv, relu, reshape, linear): the batch runs as one
    pass (run_ibp_batch: the conv as one product over the samples), each sample's bounds those of its own call up
    to the order of the conv sums, enclosing the model's float32 outputs at the centers and at random points."""
    m = denote.load(os.path.join(data_dir, "marabou", "cifar10_small.onnx"))
    rng = np.random.default_rng(11)
    n = 3
    xs = rng.uniform(0, 1, (n, 32, 32, 3))
    eps = np.array([0.001, 0.004, 0.002])
    lb, ub = m.bounds(xs, eps=eps, method="IBP")
    assert lb.shape == ub.shape == (n, 10)
    for i in range(n):
        one = m.bounds(xs[i][None], eps=float(eps[i]), method="ibp")
        np.testing.assert_allclose(lb[i], one[0].ravel(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ub[i], one[1].ravel(), rtol=1e-12, atol=1e-12)
        for x in [xs[i]] + [xs[i] + rng.uniform(-eps[i], eps[i], xs[i].shape) for _ in range(3)]:
            y = np.asarray(m.run(x[None].astype(np.float32)), dtype=np.float64).ravel()
            assert np.all(lb[i] <= y) and np.all(y <= ub[i])


@pytest.mark.parametrize("p", [2, 1])
def test_a_batch_of_lp_balls(acas_path, p):
    """A batch with norm=2 / norm=1 and one eps per sample: each sample's bounds are its own call's (CROWN and
    alpha-CROWN on the ball itself, IBP on its bounding box), they hold at points of each ball, and alpha-CROWN
    is never looser than CROWN on a ball."""
    m = denote.load(acas_path)
    rng = np.random.default_rng(3)
    xs = (LO + rng.uniform(0, 1, (3,) + LO.shape[1:]) * (HI - LO)).reshape(3, 1, 1, 5)
    eps = np.array([0.02, 0.05, 0.01])
    got = {}
    for method in ("crown", "alpha-crown", "ibp"):
        lb, ub = m.bounds(xs, eps=eps, norm=p, method=method, alpha_iters=5)
        got[method] = (lb, ub)
        for i in range(3):
            one = m.bounds(xs[i][None], eps=float(eps[i]), norm=p, method=method, alpha_iters=5)
            np.testing.assert_allclose(lb[i], one[0].ravel(), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(ub[i], one[1].ravel(), rtol=1e-9, atol=1e-12)
            for x in ball_points(xs[i].ravel(), eps[i], p, 40, seed=i):
                y = np.asarray(m.run(x.reshape(1, 1, 1, 5)), dtype=np.float64).ravel()
                assert np.all(lb[i] <= y) and np.all(y <= ub[i])
    assert np.all(got["alpha-crown"][0] >= got["crown"][0]) and np.all(got["alpha-crown"][1] <= got["crown"][1])
    with pytest.raises(denote.InvalidInputError, match="norm goes with eps"):
        m.bounds(xs - 0.01, xs + 0.01, norm=p, method="crown")


@pytest.mark.parametrize("method", ["ibp", "crown"])
def test_a_batch_with_all_nodes(acas_path, method):
    """all_nodes on a batch: {node: (lo, hi)} with a leading sample axis, each sample's boxes those of its own call."""
    m = denote.load(acas_path)
    rng = np.random.default_rng(4)
    xs = (LO + rng.uniform(0, 1, (2,) + LO.shape[1:]) * (HI - LO)).reshape(2, 1, 1, 5)
    got = m.bounds(xs, eps=0.01, method=method, all_nodes=True)
    assert sorted(got) == [n["id"] for n in m.nodes]
    for i in range(2):
        one = m.bounds(xs[i][None], eps=0.01, method=method, all_nodes=True)
        for node, (lo, hi) in one.items():
            assert got[node][0].shape[0] == 2
            np.testing.assert_allclose(got[node][0][i].ravel(), lo.ravel(), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(got[node][1][i].ravel(), hi.ravel(), rtol=1e-9, atol=1e-12)
