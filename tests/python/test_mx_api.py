"""The MX entry points' contract beyond the values (test_mx_reference.py checks those): the CLI's
quantize/dequantize give the module's codes and values, raw (elements, scales) pairs, and errors that
name the argument."""
import os
import subprocess

import numpy as np
import pytest

import denote


def test_cli_round_trip_matches_the_module(cli, tmp_path):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 70)) * np.exp2(rng.integers(-20, 20, (3, 1)))).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    e, s, y = (str(tmp_path / n) for n in ("e.npy", "s.npy", "y.npy"))
    r = subprocess.run([cli, "mx", "quantize", str(tmp_path / "x.npy"), "--format", "mxfp6_e3m2", "--block", "16",
                        "--elements", e, "--scales", s], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "scales [3, 5]" in r.stdout and "inexact" in r.stdout
    q = denote.mx_quantize(x, format="mxfp6_e3m2", block=16)
    assert np.load(e).dtype == np.uint8
    np.testing.assert_array_equal(np.load(e), q.elements)
    np.testing.assert_array_equal(np.load(s), q.scales)
    r = subprocess.run([cli, "mx", "dequantize", "--format", "mxfp6_e3m2", "--block", "16", "--elements", e,
                        "--scales", s, "--output", y], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(y), denote.mx_dequantize(q))
    np.testing.assert_array_equal(denote.mx_dequantize((q.elements, q.scales), format="mxfp6_e3m2", block=16),
                                  denote.mx_dequantize(q))
    # A scale file of the wrong shape names the option and both shapes.
    r = subprocess.run([cli, "mx", "dequantize", "--format", "mxfp6_e3m2", "--block", "32", "--elements", e,
                        "--scales", s, "--output", y], capture_output=True, text=True)
    assert r.returncode == 1 and "--scales" in r.stderr and "[3, 3]" in r.stderr, r.stderr
    r = subprocess.run([cli, "mx", "quantize", str(tmp_path / "x.npy"), "--format", "mxfp5", "--elements", e,
                        "--scales", s], capture_output=True, text=True)
    assert r.returncode == 2 and "mxfp4_e2m1" in r.stderr, r.stderr


def test_errors_name_the_argument():
    x = np.ones((2, 4))
    with pytest.raises(denote.InvalidInputError) as e:
        denote.mx_quantize(x, format="fp8")
    assert e.value.field == "format"
    with pytest.raises(denote.InvalidInputError) as e:
        denote.mx_quantize(x, axis=2)
    assert e.value.field == "axis"
    with pytest.raises(denote.InvalidInputError) as e:
        denote.mx_quantize(x, block=0)
    assert e.value.field == "block"
    q = denote.mx_quantize(x, format="mxfp4_e2m1", block=2)
    with pytest.raises(denote.InvalidInputError) as e:
        denote.mx_dequantize((q.elements, q.scales[:, :1]), format="mxfp4_e2m1", block=2)
    assert e.value.field == "scales"
    with pytest.raises(denote.InvalidInputError):
        denote.mx_dequantize(q, format="mxint8")  # differs from the array's own format
    with pytest.raises(denote.InvalidInputError) as e:
        denote.mx_dequantize((q.elements | 0x10, q.scales), format="mxfp4_e2m1", block=2)
    assert "bits above the 4-bit width" in str(e.value)
    with pytest.raises(denote.InvalidInputError) as e:
        denote.mx_matmul(q, q)  # [2, 4] @ [2, 4]
    assert e.value.field == "b"
    sq = denote.mx_quantize(np.ones((4, 4)), format="mxfp4_e2m1", block=2)
    with pytest.raises(denote.InvalidInputError) as e:
        denote.mx_matmul(sq, sq)  # b must be blocked along axis 0
    assert e.value.field == "block"
    b = denote.mx_quantize(np.ones((4, 3)), format="mxfp4_e2m1", block=2, axis=0)
    with pytest.raises(denote.InvalidInputError) as e:
        denote.mx_matmul(q, b, accumulate="bfloat16")
    assert e.value.field == "accumulate"
    v, flags = denote.mx_matmul(q, b)
    np.testing.assert_array_equal(v, np.full((2, 3), 4.0))
    assert not flags["inexact"]
