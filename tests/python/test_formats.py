"""denote.format_op: exact elementwise add/sub/mul on packed uint16 words, checked against numpy's
float16 arithmetic (float32 then one rounding to binary16: correctly rounded, since 24 >= 2 * 11 + 2)
and, for the flags, against exact float64 sums and products of the decoded values."""
import numpy as np
import pytest

import denote

OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def finite_half_words(rng, n):
    w = rng.integers(0, 1 << 16, size=n, dtype=np.uint16)
    return w[np.isfinite(w.view(np.float16))]


@pytest.mark.parametrize("op", sorted(OPS))
def test_binary16_nearest_even_is_numpys_float16(op):
    rng = np.random.default_rng(5)
    a, b = finite_half_words(rng, 50000), finite_half_words(rng, 50000)
    n = min(a.size, b.size)
    a, b = a[:n], b[:n]
    words, flags = denote.format_op(op, a, b, format="binary16")
    assert words.dtype == np.uint16 and words.shape == a.shape
    with np.errstate(all="ignore"):
        want = OPS[op](a.view(np.float16), b.view(np.float16)).view(np.uint16)
    assert np.array_equal(words, want)
    exact = OPS[op](a.view(np.float16).astype(np.float64), b.view(np.float16).astype(np.float64))
    got = words.view(np.float16).astype(np.float64)
    assert flags["inexact"] == bool(np.any(got != exact))
    assert flags["overflow"] == bool(np.any(np.isinf(got)))


def test_every_mode_and_shape_is_kept():
    a = np.array([[0x3F80, 0x4000], [0x7F7F, 0x0001]], dtype=np.uint16)  # bfloat16 1, 2, max, tiny
    b = np.array([[0x3F80, 0x3B80], [0x7F7F, 0x0001]], dtype=np.uint16)
    up, _ = denote.format_op("add", a, b, format="bfloat16", rounding="upward")
    down, _ = denote.format_op("add", a, b, format="bfloat16", rounding="toward-zero")
    assert up.shape == (2, 2)
    assert up[0, 0] == 0x4000 and down[0, 0] == 0x4000  # 1 + 1 = 2 exactly
    assert up[1, 0] == 0x7F80 and down[1, 0] == 0x7F7F  # max + max: inf upward, max toward zero
    assert up[0, 1] == 0x4001 and down[0, 1] == 0x4000  # 2 + 2^-8 is not a bfloat16 value


def test_e4m3fn_words_and_errors():
    words, flags = denote.format_op("mul", np.array([0x38], np.uint16), np.array([0x40], np.uint16), format="e4m3fn")
    assert words[0] == 0x40 and not flags["inexact"]  # 1 * 2 = 2
    with pytest.raises(denote.InvalidInputError):
        denote.format_op("add", np.array([0x1FF], np.uint16), np.array([0], np.uint16), format="e4m3fn")
    with pytest.raises(denote.InvalidInputError) as e:
        denote.format_op("add", np.zeros(2, np.float32), np.zeros(2, np.uint16))
    assert e.value.field == "a"
    with pytest.raises(denote.InvalidInputError) as e:
        denote.format_op("add", np.zeros(2, np.uint16), np.zeros(3, np.uint16))
    assert e.value.field == "b"
    with pytest.raises(denote.InvalidInputError) as e:
        denote.format_op("add", np.zeros(2, np.uint16), np.zeros(2, np.uint16), format="binary32")
    assert e.value.field == "format"
    with pytest.raises(denote.InvalidInputError) as e:
        denote.format_op("div", np.zeros(2, np.uint16), np.zeros(2, np.uint16))
    assert e.value.field == "op"
