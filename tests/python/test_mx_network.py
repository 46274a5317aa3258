"""Whole networks under an MX arithmetic (Model.run(arith="mxfp8_e4m3"), denote run --arith): each
linear layer's product is bit for bit the one emulated here from denote.mx_quantize's codes (tested
against the spec in test_mx_reference.py): exact block dot products in float64 (exact for these formats),
rounded to float32, summed over blocks in float32 in order, plus the bias in float32; relu in float32."""
import json
import subprocess

import numpy as np
import pytest

import denote


def mlp(rng, sizes, batch):
    b = denote.GraphBuilder()
    x = b.input([batch, sizes[0]])
    params = []
    h = x
    for k, (i, o) in enumerate(zip(sizes, sizes[1:])):
        W, bias = rng.standard_normal((o, i)) * 0.1, rng.standard_normal(o) * 0.1
        params.append((W, bias))
        h = b.linear(h, W, bias)
        if k + 2 < len(sizes):
            h = b.op("relu", h)
    return b.build(h), params


def emulate_layer(a32, W, bias, act, wfmt, block):
    qa = denote.mx_quantize(a32.astype(np.float64), act, block, -1)
    qw = denote.mx_quantize(W, wfmt, block, -1)
    va, vw = denote.mx_dequantize(qa), denote.mx_dequantize(qw)
    K = W.shape[1]
    acc = None
    for lo in range(0, K, block):
        blk = (va[:, lo:lo + block] @ vw[:, lo:lo + block].T).astype(np.float32)  # exact sum, one rounding
        acc = blk if acc is None else (acc + blk).astype(np.float32)
    return (acc + bias.astype(np.float32)).astype(np.float32)


@pytest.mark.parametrize("act,wfmt,block", [("mxfp8_e4m3", "mxfp8_e4m3", 32), ("mxint8", "mxint8", 32),
                                            ("mxfp4_e2m1", "mxfp4_e2m1", 32), ("mxfp4_e2m1", "mxfp8_e4m3", 16),
                                            ("mxfp6_e3m2", "mxfp6_e2m3", 8)])
def test_mlp_is_the_emulated_mx_product(act, wfmt, block):
    rng = np.random.default_rng(4)
    m, params = mlp(rng, [70, 48, 33, 10], 12)
    x = rng.standard_normal((12, 70))
    spec = act if act == wfmt and block == 32 else f"{act},weights={wfmt},block={block}"
    y, flags = m.run(x, arith=spec, return_flags=True)
    h = x.astype(np.float32)
    for k, (W, bias) in enumerate(params):
        h = emulate_layer(h, W, bias, act, wfmt, block)
        if k + 1 < len(params):
            h = np.maximum(h, np.float32(0))
    np.testing.assert_array_equal(y, h.astype(np.float64))
    assert flags["inexact"]
    # The MX network differs from the float64 one by the formats' quantization, not by a bug's scale.
    exact = m.run(x)
    assert 0 < np.abs(y - exact).max() < 0.5 * np.abs(exact).max()


def test_cli_and_errors(cli, tmp_path):
    rng = np.random.default_rng(1)
    m, _ = mlp(rng, [8, 6, 3], 2)
    path = tmp_path / "m.json"
    m.to_json(str(path))
    x = rng.standard_normal((2, 8))
    r = subprocess.run([cli, "run", str(path), "--input", json.dumps(x.tolist()), "--arith", "mxint8,block=4",
                        "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.array(json.loads(r.stdout)["outputs"][0]["values"]).reshape(2, 3),
                                  m.run(x, arith="mxint8,block=4"))
    r = subprocess.run([cli, "run", str(path), "--input", json.dumps(x.tolist()), "--arith", "mxint8,blocks=4"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "unknown part 'blocks=4'" in r.stderr, r.stderr
    with pytest.raises(denote.InvalidInputError) as e:
        m.run(x, arith="mxfp7")
    assert e.value.field == "arith"
    with pytest.raises(denote.InvalidInputError) as e:
        m.run(x, arith="mxint8", accumulate="binary64")
    assert e.value.field == "accumulate"


def fp8_values(v, fmt):
    """Nearest-even with saturation onto e4m3fn (bias 7, 3 fraction bits, max 448) or e5m2 (bias 15, 2 bits,
    max 57344), written here from the formats' definitions."""
    frac, emin, top = {"mxfp8_e4m3": (3, -6, 448.0), "mxfp8_e5m2": (2, -14, 57344.0)}[fmt]
    out = np.empty(v.shape)
    for k, x in np.ndenumerate(v.astype(np.float64)):
        a = abs(x)
        if a == 0:
            out[k] = 0.0 * np.sign(x)
            continue
        e = max(int(np.floor(np.log2(a))), emin)
        q = 2.0 ** (e - frac)
        r = np.round(a / q) * q  # a / q is exact (a power of two); np.round is half-even
        out[k] = np.copysign(min(r, top), x)
    return out.astype(np.float32)


def scaled(x32, fmt):
    top = np.float32({"mxfp8_e4m3": 448.0, "mxfp8_e5m2": 57344.0}[fmt])
    amax = np.float32(np.abs(x32).max())
    scale = top / amax if amax > 0 else np.float32(1)
    return fp8_values((x32 * scale).astype(np.float32), fmt), np.float32(1) / scale


@pytest.mark.parametrize("fmt", ["mxfp8_e4m3", "mxfp8_e5m2"])
def test_per_tensor_scaled_fp8_is_torchs_recipe(fmt):
    rng = np.random.default_rng(9)
    m, params = mlp(rng, [40, 24, 5], 6)
    x = rng.standard_normal((6, 40)) * 3
    y, flags = m.run(x, arith=f"{fmt},scale=tensor", return_flags=True)
    h = x.astype(np.float32)
    for k, (W, bias) in enumerate(params):
        xq, dx = scaled(h, fmt)
        wq, dw = scaled(W.astype(np.float32), fmt)
        acc = np.zeros((h.shape[0], W.shape[0]), np.float32)
        for i in range(W.shape[1]):  # the left fold from zero, each product (exact) and sum in float32
            acc = (acc + (xq[:, i:i + 1] * wq[None, :, i]).astype(np.float32)).astype(np.float32)
        h = ((acc * np.float32(dx * dw)).astype(np.float32) + bias.astype(np.float32)).astype(np.float32)
        if k + 1 < len(params):
            h = np.maximum(h, np.float32(0))
    np.testing.assert_array_equal(y, h.astype(np.float64))
    assert flags["inexact"]
    with pytest.raises(denote.InvalidInputError) as e:
        m.run(x, arith="mxfp4_e2m1,scale=tensor")
    assert e.value.field == "arith"


def emulate_conv(x32, W, bias, fmt, block, stride, pad):
    """One conv [N, C, H, W] under the MX policy, from mx_quantize's codes: per kernel position, the
    channel blocks' exact sums (float64) rounded to float32 and summed in block order, the kernel positions
    summed in float32 in row-major order, then the bias."""
    n, cin, h, w = x32.shape
    cout, _, kh, kw = W.shape
    xv = denote.mx_dequantize(denote.mx_quantize(x32.astype(np.float64), fmt, block, 1))
    xp = np.zeros((n, cin, h + 2 * pad, w + 2 * pad))
    xp[:, :, pad:pad + h, pad:pad + w] = xv
    oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
    acc = None
    for i in range(kh):
        for j in range(kw):
            wk = denote.mx_dequantize(denote.mx_quantize(W[:, :, i, j], fmt, block, 1))  # [cout, cin]
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]      # [n, cin, oh, ow]
            rows = patch.transpose(0, 2, 3, 1).reshape(-1, cin)
            tap = None
            for lo in range(0, cin, block):
                blk = (rows[:, lo:lo + block] @ wk[:, lo:lo + block].T).astype(np.float32)
                tap = blk if tap is None else (tap + blk).astype(np.float32)
            acc = tap if acc is None else (acc + tap).astype(np.float32)
    y = (acc + bias.astype(np.float32)).astype(np.float32)
    return y.reshape(n, oh, ow, cout).transpose(0, 3, 1, 2)


@pytest.mark.parametrize("fmt,block", [("mxfp8_e4m3", 4), ("mxint8", 32), ("mxfp4_e2m1", 2)])
def test_cnn_is_the_emulated_mx_conv(fmt, block):
    rng = np.random.default_rng(6)
    W1, b1 = rng.standard_normal((6, 5, 3, 3)) * 0.3, rng.standard_normal(6) * 0.1
    W2, b2 = rng.standard_normal((4, 6, 2, 2)) * 0.3, rng.standard_normal(4) * 0.1
    W3, b3 = rng.standard_normal((3, 4 * 3 * 3)) * 0.3, rng.standard_normal(3) * 0.1
    b = denote.GraphBuilder()
    x = b.input([2, 5, 6, 6])
    h = b.op("relu", b.conv(x, W1, b1, spatial_rank=2, kernel=[3, 3], stride=[1, 1], padding=[1, 1],
                            channel_axis=1, in_channels=5, out_channels=6))
    h = b.op("relu", b.conv(h, W2, b2, spatial_rank=2, kernel=[2, 2], stride=[2, 2], padding=[0, 0],
                            channel_axis=1, in_channels=6, out_channels=4))
    y = b.linear(b.op("reshape", h, in_shape=[2, 4, 3, 3], out_shape=[2, 36]), W3, b3)
    m = b.build(y)
    X = rng.standard_normal((2, 5, 6, 6))
    got = m.run(X, arith=f"{fmt},block={block}")
    h = np.maximum(emulate_conv(X.astype(np.float32), W1, b1, fmt, block, 1, 1), np.float32(0))
    h = np.maximum(emulate_conv(h, W2, b2, fmt, block, 2, 0), np.float32(0))
    want = emulate_layer(h.reshape(2, -1), W3, b3, fmt, fmt, block)
    np.testing.assert_array_equal(got, want.astype(np.float64))


def emulate_matmul(x32, y32, fmt, block):
    """x [M, K] @ y [K, N] on MX operands: both quantized along K, exact block sums rounded to float32 and
    summed in block order."""
    va = denote.mx_dequantize(denote.mx_quantize(x32.astype(np.float64), fmt, block, 1))
    vb = denote.mx_dequantize(denote.mx_quantize(y32.astype(np.float64), fmt, block, 0))
    acc = None
    for lo in range(0, x32.shape[1], block):
        blk = (va[:, lo:lo + block] @ vb[lo:lo + block, :]).astype(np.float32)
        acc = blk if acc is None else (acc + blk).astype(np.float32)
    return acc


def test_matmul_of_two_values_is_the_emulated_mx_product():
    rng = np.random.default_rng(8)
    b = denote.GraphBuilder()
    x = b.input([2, 5, 40])
    y = b.input([2, 40, 3])
    m = b.build(b.op("relu", b.op("matmul", x, y)))
    X, Y = rng.standard_normal((2, 5, 40)), rng.standard_normal((2, 40, 3))
    got = m.run(X, Y, arith="mxfp8_e4m3,block=16")
    want = np.stack([emulate_matmul(X[e].astype(np.float32), Y[e].astype(np.float32), "mxfp8_e4m3", 16)
                     for e in range(2)])
    np.testing.assert_array_equal(got, np.maximum(want, 0).astype(np.float64))


def test_mx_products_respect_the_memory_budget():
    rng = np.random.default_rng(2)
    m, _ = mlp(rng, [70, 48, 10], 12)
    x = rng.standard_normal((12, 70))
    with pytest.raises(denote.ResourceError) as e:
        m.run(x, arith="mxfp8_e4m3", max_memory=20000)
    assert "above the memory budget of 20000" in str(e.value)
    assert m.run(x, arith="mxfp8_e4m3", max_memory=1 << 20).shape == (12, 10)


def test_review_edge_cases():
    # K = 0: the bias (linear) or zeros (matmul), as in binary32.
    b = denote.GraphBuilder()
    x = b.input([2, 0])
    m = b.build(b.linear(x, np.zeros((3, 0)), np.ones(3)))
    for arith in ("mxfp8_e4m3", "mxfp8_e4m3,scale=tensor"):
        np.testing.assert_array_equal(m.run(np.zeros((2, 0)), arith=arith), np.ones((2, 3)))
    b = denote.GraphBuilder()
    x, y = b.input([2, 3, 0]), b.input([2, 0, 4])
    m = b.build(b.op("matmul", x, y))
    np.testing.assert_array_equal(m.run(np.zeros((2, 3, 0)), np.zeros((2, 0, 4)), arith="mxfp8_e4m3"), np.zeros((2, 3, 4)))
    # Per-tensor scaled FP8: an infinite input makes amax infinite, the scale 0 and the result NaN (invalid).
    b = denote.GraphBuilder()
    x = b.input([1, 2])
    m = b.build(b.linear(x, np.array([[1.0, 1.0]]), np.zeros(1)))
    y, flags = m.run(np.array([[np.inf, 1.0]]), arith="mxfp8_e4m3,scale=tensor", return_flags=True)
    assert np.isnan(y).all() and flags["invalid"]
    # A block of specials: inf * 0 and inf - inf raise invalid.
    a = denote.MxArray(np.array([[0x7C, 0, 0, 0]], np.uint8), np.array([[127]], np.uint8), "mxfp8_e5m2", 4, 1)
    z = denote.MxArray(np.zeros((4, 1), np.uint8), np.array([[127]], np.uint8), "mxfp8_e5m2", 4, 0)
    v, flags = denote.mx_matmul(a, z)
    assert np.isnan(v).all() and flags["invalid"]
    a = denote.MxArray(np.array([[0x7C, 0xFC, 0, 0]], np.uint8), np.array([[127]], np.uint8), "mxfp8_e5m2", 4, 1)
    one = denote.MxArray(np.full((4, 1), 0x3C, np.uint8), np.array([[127]], np.uint8), "mxfp8_e5m2", 4, 0)
    v, flags = denote.mx_matmul(a, one)
    assert np.isnan(v).all() and flags["invalid"]
    with pytest.raises(denote.InvalidInputError):
        m.run(np.ones((1, 2)), arith="mxfp8_e4m3,weights=")


def test_mx_conv_counts_its_tap_table_against_the_budget():
    b = denote.GraphBuilder()
    x = b.input([1, 1, 64, 64])
    m = b.build(b.conv(x, np.ones((1, 1, 15, 15)) * 1e-3, np.zeros(1), spatial_rank=2, kernel=[15, 15], stride=[1, 1],
                       padding=[7, 7], channel_axis=1, in_channels=1, out_channels=1))
    with pytest.raises(denote.ResourceError):  # 4096 positions x 225 taps x 8 bytes
        m.run(np.ones((1, 1, 64, 64)), arith="mxfp8_e4m3", max_memory=4 << 20)
    assert m.run(np.ones((1, 1, 64, 64)), arith="mxfp8_e4m3", max_memory=64 << 20).shape == (1, 1, 64, 64)
