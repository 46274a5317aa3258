"""Model.run in every arithmetic, against the golden files and the CLI."""
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import denote

GOLDEN = os.path.join("tests", "data", "golden", "composite_mlp_softmax")


@pytest.fixture
def golden(root):
    d = os.path.join(root, GOLDEN)
    return denote.load(os.path.join(d, "model.json")), d


def test_f64_f32_match_torch_goldens(golden):
    m, d = golden
    x = np.load(os.path.join(d, "input_0.npy"))
    y64 = m.run(x)
    assert y64.dtype == np.float64 and y64.shape == (2, 3)
    np.testing.assert_allclose(y64, np.load(os.path.join(d, "expected_f64.npy")), rtol=1e-12, atol=1e-15)
    y32 = m.run(x, arith="f32")
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, np.load(os.path.join(d, "expected_f32.npy")), rtol=1e-5, atol=1e-7)


def test_acas_matches_cli(cli, acas_path):
    m = denote.load(acas_path)
    x = [[[[0.1, 0.2, 0.3, 0.4, 0.5]]]]
    for arith in ("f64", "f32", "bfloat16", "binary(5,10)", "real"):
        out = subprocess.run([cli, "run", acas_path, "--input", json.dumps(x), "--arith", arith, "--json"],
                             capture_output=True, text=True, check=True).stdout
        want = json.loads(out)["outputs"][0]["values"]
        got = m.run(np.array(x), arith=arith)
        np.testing.assert_array_equal(got.ravel(), np.array(want, dtype=got.dtype))


def test_binary_formats_rounding_and_flags(golden):
    m, d = golden
    x = np.load(os.path.join(d, "input_0.npy"))
    up, flags = m.run(x, arith="bfloat16", rounding="upward", return_flags=True)
    down = m.run(x, arith="bfloat16", rounding="downward")
    assert not np.array_equal(down, up)
    np.testing.assert_allclose(up, m.run(x), rtol=0.05, atol=0.01)
    np.testing.assert_allclose(down, m.run(x), rtol=0.05, atol=0.01)
    assert set(flags) == {"invalid", "divide_by_zero", "overflow", "underflow", "inexact", "saturated",
                          "mapped_special"}
    assert flags["inexact"] and not flags["invalid"]
    exact, f = m.run(x, arith="binary64", return_flags=True)
    np.testing.assert_array_equal(exact, m.run(x, provider="evaluator"))


def test_all_nodes_and_several_outputs():
    b = denote.GraphBuilder()
    x = b.input([3])
    r = b.op("relu", x)
    s = b.op("sum", r)
    m = b.build([r, s])
    x0 = np.array([-1.0, 2.0, 3.0])
    r0, s0 = m.run(x0)
    np.testing.assert_array_equal(r0, [0, 2, 3])
    assert s0.shape == () and s0 == 5
    t = m.run(x0, all_nodes=True)
    assert sorted(t) == [0, 1, 2]
    np.testing.assert_array_equal(t[0], x0)


def test_provider_plans_match_reference(acas_path):
    m = denote.load(acas_path)
    x = np.random.default_rng(3).uniform(-0.5, 0.5, (1, 1, 1, 5))
    ref = m.run(x, provider="evaluator")
    for p in ("auto", "only:reference", "prefer:openblas"):
        np.testing.assert_allclose(m.run(x, provider=p), ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(m.run(x, provider="only:reference"), ref)
    # Unset: the auto plan (the fastest providers), bit for bit the same as asking for it.
    np.testing.assert_array_equal(m.run(x), m.run(x, provider="auto"))
    assert m.run(x, arith="f32", provider="auto").dtype == np.float32
    assert m.run(x.astype(np.float32), arith="f32").dtype == np.float32
    # Where no plan runs the model the default falls back to the evaluator, whose errors are raised.
    with pytest.raises(denote.Error) as e:
        m.run(np.zeros((1, 1, 1, 4)))
    assert "input shape mismatch" in str(e.value) and e.value.node is not None


def test_compiled_plan_reads_inputs_in_place_or_converted(acas_path):
    """provider= runs the compiled plan: in-place (C-contiguous, the run's dtype) and converted inputs
    (other layouts, other dtypes, lists) give the same outputs; errors name the input's node."""
    m = denote.load(acas_path)
    base = np.random.default_rng(7).uniform(-0.5, 0.5, (1, 1, 1, 5))
    wide = np.zeros((1, 1, 1, 10))
    wide[..., ::2] = base
    for arith, dtype in (("f64", np.float64), ("f32", np.float32)):
        x = base.astype(dtype)
        ref = m.run(x, arith=arith, provider="only:reference")
        assert ref.dtype == dtype
        # the reference plan is the evaluator's rules
        np.testing.assert_array_equal(ref, m.run(x, arith=arith, provider="evaluator"))
        for other in (wide[..., ::2], np.asfortranarray(x), x.tolist(), x.astype(np.float16).astype(dtype)):
            got = m.run(other, arith=arith, provider="only:reference")
            np.testing.assert_array_equal(
                got, m.run(np.ascontiguousarray(other, dtype=dtype), arith=arith, provider="evaluator"))
        for p in ("auto", "prefer:openblas"):
            np.testing.assert_allclose(m.run(x, arith=arith, provider=p), ref, rtol=1e-5 if arith == "f32" else 1e-12)
        again = m.run(x, arith=arith, provider="only:reference")
        assert again is not ref and np.array_equal(again, ref)  # outputs are fresh arrays, not the plan's buffers
    with pytest.raises(denote.Error) as e:
        m.run(np.zeros((1, 1, 1, 4)), provider="only:reference")
    assert "input shape mismatch" in str(e.value) and e.value.node is not None


def test_layouts_and_dtypes_of_inputs(acas_path):
    m = denote.load(acas_path)
    base = np.random.default_rng(5).uniform(-0.5, 0.5, (1, 1, 1, 5))
    ref = m.run(base)
    wide = np.zeros((1, 1, 1, 10))
    wide[..., ::2] = base
    view = wide[..., ::2]
    assert not view.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(m.run(view), ref)
    fortran = np.asfortranarray(base)
    np.testing.assert_array_equal(m.run(fortran), ref)
    np.testing.assert_array_equal(m.run(base.tolist()), ref)
    f32 = base.astype(np.float32)
    np.testing.assert_array_equal(m.run(f32), m.run(f32.astype(np.float64)))
    # The evaluator reads each input once in every arith: f64/f32 take a tensor of their scalar, the
    # software formats and MPFR convert the float64 array's elements in place.
    for arith in ("f32", "bfloat16", "binary(5,2)", "real"):
        want = m.run(base, arith=arith)
        for other in (view, fortran, base.tolist()):
            np.testing.assert_array_equal(m.run(other, arith=arith), want)
        np.testing.assert_array_equal(m.run(f32, arith=arith), m.run(f32.astype(np.float64), arith=arith))
    # all_nodes hands back the input node's value as its own array: changing the caller's array later
    # does not change it.
    x = base.copy()
    nodes = m.run(x, all_nodes=True)
    x[...] = 7.0
    np.testing.assert_array_equal(nodes[m.inputs[0]], base)


def test_results_own_their_memory(acas_path):
    m = denote.load(acas_path)
    ys = [m.run(np.full((1, 1, 1, 5), 0.01 * k)) for k in range(50)]
    assert all(y.flags["OWNDATA"] is False and y.base is not None for y in ys)
    again = [m.run(np.full((1, 1, 1, 5), 0.01 * k)) for k in range(50)]
    for a, b in zip(ys, again):
        np.testing.assert_array_equal(a, b)


def test_runs_in_threads_release_the_gil(acas_path):
    m = denote.load(acas_path)
    x = np.random.default_rng(9).uniform(-0.5, 0.5, (1, 1, 1, 5))
    ref = m.run(x, arith="bfloat16")
    errors = []

    def work():
        for _ in range(20):
            if not np.array_equal(m.run(x, arith="bfloat16"), ref):
                errors.append("mismatch")
            m.run(x, arith="f32")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_typed_onnx_with_integer_arrays(acas_path):
    m = denote.load(acas_path)
    # ACAS Xu's input is FLOAT: integer arrays are refused with the dtype named, not crashed on.
    with pytest.raises(denote.InvalidInputError) as e:
        m.run(np.zeros((1, 1, 1, 5), dtype=np.int32))
    assert e.value.field == "dtype"


def test_typed_builder_model_with_integers():
    b = denote.GraphBuilder()
    x = b.input([3])
    y = b.input([3])
    m = b.build(b.op("mul_elem", x, y))
    a = np.array([100, -7, 3], dtype=np.int8)
    out = m.run(a, np.array([2, 3, -1], dtype=np.int8))
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, np.array([-56, -21, -3], dtype=np.int8))  # 200 wraps to -56
    u = m.run(np.array([True, False, True]), np.array([True, True, False]))
    assert u.dtype == np.bool_


def test_prefer_an_absent_provider_is_an_error(acas_path):
    """provider="prefer:P" with P not in this build or on this machine: an error naming what is here, not a
    silent run on another provider (issue 51)."""
    m = denote.load(acas_path)
    x = np.zeros((1, 1, 1, 5))
    with pytest.raises(denote.InvalidInputError, match="cuda is not available in this build on this machine"):
        m.run(x, provider="prefer:cuda")
    with pytest.raises(denote.InvalidInputError, match="nosuch is not available"):
        m.plan("prefer:nosuch")
    m.run(x, provider="prefer:reference")  # one that is here
