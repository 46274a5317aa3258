"""Model.bounds, grad, jvp, plan and denote.verify, against the CLI and the golden files."""
import json
import os
import signal
import threading
import time
import subprocess

import numpy as np
import pytest

import denote

LO = np.array([[[[0.6, -0.5, -0.5, 0.45, -0.5]]]])
HI = np.array([[[[0.68, 0.5, 0.5, 0.5, -0.45]]]])


def cli_json(cli, *args):
    return json.loads(subprocess.run([cli, *args, "--json"], capture_output=True, text=True, check=True).stdout)


@pytest.mark.parametrize("method,arith", [("ibp", "f64"), ("ibp", "binary32"), ("crown", "f32"),
                                          ("alpha-crown", "f32")])
def test_bounds_match_cli(cli, acas_path, method, arith):
    m = denote.load(acas_path)
    lo, hi = m.bounds(LO, HI, method=method, arith=arith)
    want = cli_json(cli, "bounds", acas_path, "--box", json.dumps(LO.tolist()), json.dumps(HI.tolist()),
                    "--method", method, "--arith", arith)["boxes"][0]
    assert lo.shape == (1, 5)
    np.testing.assert_array_equal(lo.ravel(), want["lo"])
    np.testing.assert_array_equal(hi.ravel(), want["hi"])


@pytest.mark.parametrize("intermediate", ["crown", "forward", "forward+crown", "ibp"])
def test_bounds_intermediate_match_cli(cli, acas_path, intermediate):
    m = denote.load(acas_path)
    lo, hi = m.bounds(LO, HI, method="crown", arith="f32", intermediate=intermediate)
    want = cli_json(cli, "bounds", acas_path, "--box", json.dumps(LO.tolist()), json.dumps(HI.tolist()),
                    "--method", "crown", "--arith", "f32", "--intermediate", intermediate)["boxes"][0]
    np.testing.assert_array_equal(lo.ravel(), want["lo"])
    np.testing.assert_array_equal(hi.ravel(), want["hi"])
    if intermediate == "ibp":  # auto_LiRPA's name for it
        same = m.bounds(LO, HI, method="crown", arith="f32", intermediate="CROWN-IBP")
        np.testing.assert_array_equal(same[0], lo)
    with pytest.raises(denote.InvalidInputError, match="intermediate"):
        m.bounds(LO, HI, method="crown", intermediate="sideways")


def test_torch_tensors_are_read_as_their_values(acas_path):
    """An auto_LiRPA user's tensors (requires_grad or not) pass as they are: their values are read."""
    torch = pytest.importorskip("torch")
    m = denote.load(acas_path)
    lo_t = torch.tensor(LO, dtype=torch.float64, requires_grad=True)
    hi_t = torch.tensor(HI, dtype=torch.float64)
    for method in ("ibp", "crown"):
        got, want = m.bounds(lo_t, hi_t, method=method), m.bounds(LO, HI, method=method)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    x = torch.tensor((LO + HI) / 2, dtype=torch.float32, requires_grad=True)
    np.testing.assert_array_equal(m.run(x), m.run(x.detach().numpy()))


def test_bounds_contain_samples(acas_path):
    m = denote.load(acas_path)
    lo, hi = m.bounds(LO, HI, method="crown")
    # auto_LiRPA's spellings name the same methods (issue 51).
    lo2, hi2 = m.bounds(LO, HI, method="CROWN")
    np.testing.assert_array_equal(lo, lo2)
    np.testing.assert_array_equal(hi, hi2)
    rng = np.random.default_rng(0)
    for _ in range(50):
        x = LO + rng.uniform(0, 1, LO.shape) * (HI - LO)
        y = m.run(x)
        assert np.all(lo <= y) and np.all(y <= hi)


def test_bounds_spec_and_all_nodes(acas_path):
    m = denote.load(acas_path)
    spec = np.array([[1.0, -1, 0, 0, 0], [1, 0, -1, 0, 0]])
    slo, shi = m.bounds(LO, HI, method="alpha-crown", arith="f32", spec=spec)
    assert slo.shape == (2,) and np.all(slo <= shi)
    boxes = m.bounds(LO, HI, all_nodes=True, arith="f64")
    assert sorted(boxes) == list(range(17))
    np.testing.assert_array_equal(boxes[0][0], LO)
    # The file's own arithmetic by default (FLOAT inputs: f32): the input box holds the binary32 roundings too.
    boxes32 = m.bounds(LO, HI, all_nodes=True)
    assert np.all(boxes32[0][0] <= LO) and np.all(boxes32[0][1] >= HI)
    assert np.all(boxes32[0][0] <= np.float32(LO)) and np.all(boxes32[0][1] >= np.float32(HI))


def test_grad_matches_torch_golden(root):
    d = os.path.join(root, "tests", "data", "golden", "composite_mlp_softmax")
    m = denote.load(os.path.join(d, "model.json"))
    x = np.load(os.path.join(d, "input_0.npy"))
    c = np.load(os.path.join(d, "cotangent.npy"))
    g = m.grad(x, cotangent=c)
    np.testing.assert_allclose(g, np.load(os.path.join(d, "grad_input_0.npy")), rtol=1e-10, atol=1e-13)


def test_grad_params_and_jvp(mlp):
    m, w1, b1, w2, b2 = mlp
    x = np.array([0.3, -0.2, 0.1, 0.4])
    gin, params = m.grad(x, wrt="all")
    h = np.tanh(w1 @ x + b1)
    np.testing.assert_allclose(gin, w1.T @ ((1 - h ** 2) * (w2.T @ np.ones(3))), rtol=1e-12)
    np.testing.assert_allclose(params[(3, "bias")], np.ones(3))
    np.testing.assert_allclose(params[(3, "weight")], np.outer(np.ones(3), h), rtol=1e-13)
    t = np.array([1.0, 0, 0, 0])
    value, tangent = m.jvp(x, tangents=t)
    np.testing.assert_allclose(value, m.run(x))
    np.testing.assert_allclose(tangent, w2 @ ((1 - h ** 2) * w1[:, 0]), rtol=1e-12)
    g16 = m.grad(x, arith="bfloat16")
    np.testing.assert_allclose(g16, gin, rtol=0.05, atol=0.05)


def test_plan(cli, acas_path):
    m = denote.load(acas_path)
    p = m.plan("prefer:openblas")
    assert p == cli_json(cli, "plan", acas_path, "--provider", "prefer:openblas")
    assert m.plan(report=True).startswith("2: sub")
    with pytest.raises(denote.InvalidInputError):
        m.plan("sometimes")


def test_verify_matches_cli(cli, root, acas_path):
    prop = os.path.join(root, "docs", "tour", "acas_prop1.vnnlib")
    m = denote.load(acas_path)
    r = denote.verify(m, prop, timeout=60)
    want = cli_json(cli, "verify", acas_path, prop)
    assert r["result"] == want["result"] == "unsat"
    assert r["witness"] is None
    assert set(r["stats"]) <= set(want["stats"])
    assert {"decided_by", "domains", "crown_calls", "samples"} <= set(r["stats"])
    assert r["stats"]["domains"] == want["stats"]["domains"]
    # ACAS Xu has 5 inputs: "auto" splits inputs, so "input" is the same search; "relu" splits relu phases.
    same = denote.verify(m, prop, timeout=60, split="input")
    assert same["stats"]["domains"] == r["stats"]["domains"]
    relu = denote.verify(m, prop, timeout=2, split="relu")
    assert relu["result"] in ("unsat", "timeout", "unknown")
    with pytest.raises(denote.InvalidInputError):
        denote.verify(m, prop, split="neurons")
    with pytest.raises(denote.ParseError):
        denote.verify(m, "/nonexistent.vnnlib")


def _interrupt_after(seconds):
    """Sends this process SIGINT (Ctrl-C) after `seconds`, from another thread."""
    t = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_ctrl_c_interrupts_long_calls(root, acas_path):
    """Ctrl-C during a long bounds or verify call raises KeyboardInterrupt at the call's next deadline check
    (python/src/interrupt.h), not after the call, and the next call runs normally (the stop is cleared)."""
    m = denote.load(acas_path)
    lo = np.array([0.6, -0.5, -0.5, 0.45, -0.5]).reshape(1, 1, 1, 5)
    hi = np.array([0.68, 0.5, 0.5, 0.5, -0.45]).reshape(1, 1, 1, 5)
    start = time.monotonic()
    timer = _interrupt_after(0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            m.bounds(lo, hi, method="alpha-crown", alpha_iters=100000)  # minutes without the interrupt
    finally:
        timer.cancel()
    assert time.monotonic() - start < 20
    prop = os.path.join(root, "docs", "tour", "acas_prop1.vnnlib")
    start = time.monotonic()
    timer = _interrupt_after(0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            denote.verify(m, prop, timeout=600, split="relu")  # relu splitting: far past a second here
    finally:
        timer.cancel()
    assert time.monotonic() - start < 20
    r = denote.verify(m, prop, timeout=60)
    assert r["result"] == "unsat"
    with pytest.raises(denote.InvalidInputError):
        denote.verify(m, prop, max_memory=0)
    starved = denote.verify(m, prop, timeout=60, max_memory=2048)
    assert starved["result"] == "unknown"
    assert "a bound failed" in starved["note"]


def test_verify_one_alpha_crown_for_a_cases_conjunctions(tmp_path):
    """A robustness property's conjunctions share the input box: CROWN leaves two of them open here and one
    alpha-CROWN call on their rows together proves both (the optimised intermediate bounds serve every row)."""
    rng = np.random.default_rng(68)
    b = denote.GraphBuilder()
    x = b.input([4])
    h = b.op("sigmoid", b.linear(x, rng.uniform(-2, 2, (8, 4)), rng.uniform(-1, 1, 8)))
    h = b.op("sigmoid", b.linear(h, rng.uniform(-2, 2, (8, 8)), rng.uniform(-1, 1, 8)))
    m = b.build([b.linear(h, rng.uniform(-2, 2, (5, 8)), rng.uniform(-1, 1, 5))])
    x0, eps, label = np.array([0.1, -0.2, 0.3, 0.05]), 0.35, 1
    assert int(np.argmax(np.asarray(m.run(x0)).ravel())) == label
    lines = [f"(declare-const X_{i} Real)" for i in range(4)] + [f"(declare-const Y_{j} Real)" for j in range(5)]
    lines += [f"(assert (>= X_{i} {x0[i] - eps!r}))\n(assert (<= X_{i} {x0[i] + eps!r}))" for i in range(4)]
    lines.append("(assert (or " + " ".join(f"(and (>= Y_{j} Y_{label}))" for j in range(5) if j != label) + "))")
    prop = tmp_path / "robust.vnnlib"
    prop.write_text("\n".join(lines) + "\n")
    # CROWN alone leaves two conjunctions open (their rows' lower bounds below 0).
    C = np.zeros((4, 5))
    for r, j in enumerate(j for j in range(5) if j != label):
        C[r, label], C[r, j] = 1, -1
    lo, _ = m.bounds(x0 - eps, x0 + eps, method="crown", spec=C, arith="f32")
    assert (lo < 0).sum() == 2
    r = denote.verify(m, str(prop), timeout=60, threads=1)
    assert r["result"] == "unsat"
    assert r["stats"]["decided_by"] == "alpha-crown"
    assert r["stats"]["alpha_calls"] == 1
    # The property's text does as well as its file.
    t = denote.verify(m, prop.read_text(), timeout=60, threads=1)
    assert (t["result"], t["stats"]["alpha_calls"]) == ("unsat", 1)
    with pytest.raises(denote.ParseError, match="vnnlib text"):
        denote.verify(m, "(assert (>= X_0 0.5)", timeout=5)


def test_bounds_warn_where_crown_takes_the_ibp_box(acas_path):
    b = denote.GraphBuilder()
    x = b.input([3])
    h = b.op("gelu", b.linear(x, np.eye(3), np.zeros(3)))
    m = b.build([b.linear(h, np.ones((1, 3)), np.zeros(1))])
    lo, hi = -np.ones(3), np.ones(3)
    with pytest.warns(UserWarning, match=r"no linear relaxation at node 2 \(gelu\)"):
        m.bounds(lo, hi, method="crown")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none on an MLP, none for IBP
        denote.load(acas_path).bounds(LO, HI, method="crown")
        m.bounds(lo, hi, method="ibp")


def test_bounds_on_an_linf_ball(cli, acas_path):
    """auto_LiRPA's PerturbationLpNorm(norm=inf, eps): the center as lo, eps=; the CLI's --center/--eps box
    (x +- eps rounded outward), next to the box x - eps, x + eps computed in numpy."""
    m = denote.load(acas_path)
    x, eps = (LO + HI) / 2, 0.01
    for method in ("ibp", "crown"):  # f64, as the CLI's default (the model's own f32 is Python's)
        got = m.bounds(x, eps=eps, method=method, arith="f64")
        want = cli_json(cli, "bounds", acas_path, "--center", json.dumps(x.tolist()), "--eps", str(eps),
                        "--method", method)["boxes"][0]
        np.testing.assert_array_equal(got[0].ravel(), want["lo"])
        np.testing.assert_array_equal(got[1].ravel(), want["hi"])
        box = m.bounds(x - eps, x + eps, method=method, arith="f64")  # a box one rounding smaller
        np.testing.assert_allclose(got[0], box[0], rtol=1e-9)
        np.testing.assert_allclose(got[1], box[1], rtol=1e-9)
    assert m.bounds(x, eps=eps, norm=float("inf"))[0].shape == (1, 5)
    with pytest.raises(denote.InvalidInputError, match="norm 3: expected inf, 2 or 1"):
        m.bounds(x, eps=eps, norm=3)
    with pytest.raises(denote.InvalidInputError, match="norm goes with eps"):
        m.bounds(x - eps, x + eps, norm=2)
    with pytest.raises(denote.InvalidInputError, match="eps"):
        m.bounds(x, eps=-1.0)
    with pytest.raises(denote.InvalidInputError, match="no hi"):
        m.bounds(x, x, eps=eps)
    with pytest.raises(denote.InvalidInputError, match="hi"):
        m.bounds(x)


def test_verify_pinned_decimal_witness_and_tolerance(cli, tmp_path):
    """An input pinned to 0.1 (no float or double equals it): the witness holds for the real network at the
    decimal itself (x_exact), the f32 network at the nearest float (x); the CLI writes the decimal."""
    b = denote.GraphBuilder()
    m = b.build([b.linear(b.input([2]), np.array([[1.0, 1.0]]), np.array([0.0]))])
    text = ("(declare-const X_0 Real)(declare-const X_1 Real)(declare-const Y_0 Real)"
            "(assert (>= X_0 0.1))(assert (<= X_0 0.1))(assert (>= X_1 0))(assert (<= X_1 1))(assert (>= Y_0 0.6))")
    r = denote.verify(m, text, timeout=5)
    assert r["result"] == "sat"
    w = r["witness"]
    assert w["x_exact"] == ["0.1", ""]
    assert w["x"][0] == float(np.float32(0.1))
    assert w["semantics"].startswith("real at the exact decimal inputs")
    assert 0 < w["outside"] < 2e-9
    # Y_0 >= 0.1000000001 holds at the float nearest 0.1 only: sat only within a tolerance, which is said.
    strict = text.replace("0.6", "0.1000000001").replace("(assert (>= X_1 0))(assert (<= X_1 1))",
                                                         "(assert (>= X_1 0))(assert (<= X_1 0))")
    assert denote.verify(m, strict, timeout=0.5)["result"] != "sat"
    tol = denote.verify(m, strict, timeout=5, witness_tolerance=1e-4)
    assert tol["result"] == "sat" and "within the tolerance" in tol["witness"]["semantics"]
    with pytest.raises(ValueError):
        denote.verify(m, strict, witness_tolerance=-1)
    # The bound passes' intermediate bounds, as bounds(intermediate=...): the same answer here.
    assert denote.verify(m, text, timeout=5, intermediate="ibp")["result"] == "sat"
    with pytest.raises(ValueError, match="intermediate"):
        denote.verify(m, text, intermediate="zonotope")
    model = tmp_path / "sum.json"
    m.to_json(str(model))
    prop = tmp_path / "pinned.vnnlib"
    prop.write_text(text)
    out = subprocess.run([cli, "verify", str(model), str(prop), "--timeout", "5"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("sat\n((X_0 0.1)\n"), out.stdout


def test_bounds_default_to_the_models_own_arithmetic(acas_path, root):
    """Issue 51: a float32 model's bounds hold for its float32 outputs without arith=: an ONNX file of FLOAT
    inputs (and a float32 torch capture) defaults to f32; a JSON model, which names no arithmetic, to f64."""
    m = denote.load(acas_path)
    assert m.arith == "f32"
    x = np.array([0.6, -0.5, -0.5, 0.45, -0.5]).reshape(LO.shape)
    y32 = m.run(x.astype(np.float32), arith="f32")
    for method in ("ibp", "crown"):
        lo, hi = m.bounds(x, x, method=method)
        np.testing.assert_array_equal(lo, m.bounds(x, x, method=method, arith="f32")[0])
        assert np.all(lo <= y32) and np.all(y32 <= hi), method
    f64_lo, f64_hi = m.bounds(x, x, method="crown", arith="f64")  # the exact network's range only
    assert not (np.all(f64_lo <= y32) and np.all(y32 <= f64_hi))
    m.arith = "f64"
    np.testing.assert_array_equal(m.bounds(x, x, method="crown")[0], f64_lo)
    with pytest.raises(denote.InvalidInputError, match="arith"):
        m.arith = "binary16"
    g = denote.load(os.path.join(root, "tests", "data", "golden", "composite_mlp_softmax", "model.json"))
    assert g.arith is None
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Linear(5, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    assert denote.from_torch(net, torch.zeros(1, 5)).arith == "f32"
    assert denote.from_torch(net.double(), torch.zeros(1, 5, dtype=torch.float64)).arith == "f64"
