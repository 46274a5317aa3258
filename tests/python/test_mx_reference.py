"""denote.mx_quantize / mx_dequantize / mx_matmul against an independent reference of the OCP
Microscaling (MX) Formats Specification v1.0, written here from the spec with exact rationals
(fractions.Fraction). numpy only builds the inputs and reads denote's outputs; every value the
reference computes (scales, element roundings, dot products, accumulations) is exact arithmetic
followed by explicit round-to-nearest-even.

The semantics checked (spec 5.3, 5.4, 6.1-6.3, and denote's choices where the spec leaves freedom):
- a block's shared exponent is floor(log2(amax)) - emax_elem, clamped to [-127, 127], scale code e + 127;
- a block with a NaN or an infinity: scale 0xFF, every element code 0, flag mapped_special;
- a block of zeros: scale code 0, elements keep each zero's sign (float formats), code 0 for MXINT8;
- elements: V / 2^e rounded to nearest even on the element format's grid (subnormals included),
  saturating at +-max (overflow, inexact, saturated); MXINT8: round-half-even(V / 2^e * 64) clamped
  to [-127, 127];
- mx_matmul: each block's dot product exact, rounded once to the accumulation format, then the
  block results summed in that format in increasing block order.
"""
import math
from fractions import Fraction

import numpy as np
import pytest

import denote

# ---------------------------------------------------------------------------------------------
# The reference: element formats (spec 5.3, 5.3.1-5.3.3 and 5.4)
# ---------------------------------------------------------------------------------------------

FORMAT_NAMES = ["mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4_e2m1", "mxint8"]
FLOAT_FORMATS = [f for f in FORMAT_NAMES if f != "mxint8"]
# The brief's emax_elem (unbiased exponent of the largest normal; INT8: 0, its largest 127/64).
EMAX_ELEM = {"mxfp8_e4m3": 8, "mxfp8_e5m2": 15, "mxfp6_e3m2": 4, "mxfp6_e2m3": 2, "mxfp4_e2m1": 2, "mxint8": 0}

NAN = float("nan")
INF = float("inf")


def pow2(k):
    return Fraction(1 << k) if k >= 0 else Fraction(1, 1 << -k)


def floor_log2(a):
    """floor(log2(a)) of a positive Fraction, exactly."""
    n, d = a.numerator, a.denominator
    k = n.bit_length() - d.bit_length()
    if (n << max(-k, 0)) < (d << max(k, 0)):  # a < 2^k
        k -= 1
    return k


def rne_int(a):
    """Round a non-negative Fraction to the nearest integer, ties to even."""
    q, r = divmod(a.numerator, a.denominator)
    twice = 2 * r
    if twice > a.denominator or (twice == a.denominator and q & 1):
        q += 1
    return q


class ElementFormat:
    """One MX element format: the decoding of every code, and the rounding of an exact value."""

    def __init__(self, name):
        self.name = name
        self.is_int = name == "mxint8"
        if self.is_int:
            self.bits = 8
        else:
            ebits, mbits = {"mxfp8_e4m3": (4, 3), "mxfp8_e5m2": (5, 2), "mxfp6_e3m2": (3, 2),
                            "mxfp6_e2m3": (2, 3), "mxfp4_e2m1": (2, 1)}[name]
            self.ebits, self.mbits = ebits, mbits
            self.bits = 1 + ebits + mbits
            self.bias = (1 << (ebits - 1)) - 1
            self.emin = 1 - self.bias  # exponent of the smallest normal
            self.sign_bit = 1 << (self.bits - 1)
        self.ncodes = 1 << self.bits
        self.values = [self._decode(c) for c in range(self.ncodes)]
        finite = [v for v in self.values if isinstance(v, Fraction)]
        self.maxval = max(finite)
        self.code_of = {}  # non-negative value -> code (sign bit clear)
        for c, v in enumerate(self.values):
            if isinstance(v, Fraction) and v >= 0 and not (v == 0 and c != 0):
                self.code_of.setdefault(v, c)

    def _decode(self, c):
        """Value of code c: a Fraction, or a float NaN / +-inf (or -0.0 for negative zero)."""
        if self.is_int:
            i = c - 256 if c >= 128 else c
            return Fraction(i, 64)
        sign = -1 if c & self.sign_bit else 1
        ef = (c >> self.mbits) & ((1 << self.ebits) - 1)
        m = c & ((1 << self.mbits) - 1)
        top = (1 << self.ebits) - 1
        if self.name == "mxfp8_e5m2" and ef == top:  # IEEE-like: inf and NaNs
            return sign * INF if m == 0 else NAN
        if self.name == "mxfp8_e4m3" and ef == top and m == (1 << self.mbits) - 1:  # e4m3fn: S.1111.111
            return NAN
        if ef == 0:
            mag = m * pow2(1 - self.bias - self.mbits)
        else:
            mag = ((1 << self.mbits) + m) * pow2(ef - self.bias - self.mbits)
        if mag == 0 and sign < 0:
            return -0.0
        return sign * mag

    def value_float(self, c):
        v = self.values[c]
        return float(v)  # exact: every element value fits a binary64

    def quantize(self, q, negative_zero=False):
        """Round the exact quotient q (a Fraction) to the format, saturating.
        Returns (code, inexact, overflow, underflow) where underflow is 'yes', 'no' or 'maybe'
        ('maybe': tiny before rounding but rounded up to the smallest normal; IEEE lets an
        implementation call that underflow or not)."""
        if self.is_int:
            a = abs(q) * 64
            n = rne_int(a)
            inexact = n != a
            overflow = n > 127
            if overflow:
                n, inexact = 127, True
            i = -n if q < 0 else n
            return i % 256, inexact, overflow, None
        if q == 0:
            return (self.sign_bit if negative_zero else 0), False, False, "no"
        a = abs(q)
        e = max(floor_log2(a), self.emin)
        ulp = pow2(e - self.mbits)
        r = rne_int(a / ulp) * ulp  # nearest even on the grid with an unbounded exponent range
        inexact = r != a
        overflow = r > self.maxval
        if overflow:
            r, inexact = self.maxval, True  # 480 is on E4M3's grid but not a finite value
        underflow = "no"
        min_normal = pow2(self.emin)
        if inexact and a < min_normal:
            underflow = "yes" if r < min_normal else "maybe"
        code = self.code_of[r]
        if q < 0:
            code |= self.sign_bit  # a negative quotient that rounds to zero gives -0
        return code, inexact, overflow, underflow


FMT = {name: ElementFormat(name) for name in FORMAT_NAMES}


def scale_value(code):
    return NAN if code == 0xFF else math.ldexp(1.0, code - 127)


def new_flags():
    return {"inexact": False, "overflow": False, "saturated": False, "mapped_special": False,
            "underflow": "no", "special_blocks": False}


def merge_underflow(u, v):
    if u == "yes" or v == "yes":
        return "yes"
    if u == "maybe" or v == "maybe":
        return "maybe"
    if u is None or v is None:
        return None
    return "no"


def ref_block(vals, fmt):
    """One block (Python floats, exact copies of the inputs): (scale code, element codes, flags)."""
    f = FMT[fmt]
    flags = new_flags()
    if fmt == "mxint8":
        flags["underflow"] = None
    if any(math.isnan(v) or math.isinf(v) for v in vals):
        flags["mapped_special"] = flags["special_blocks"] = True
        return 0xFF, [0] * len(vals), flags
    exact = [Fraction(v) for v in vals]
    amax = max(abs(v) for v in exact)
    if amax == 0:
        if f.is_int:
            return 0, [0] * len(vals), flags
        return 0, [f.sign_bit if math.copysign(1.0, v) < 0 else 0 for v in vals], flags
    e = floor_log2(amax) - EMAX_ELEM[fmt]
    e = min(max(e, -127), 127)
    inv = pow2(-e)
    codes = []
    for v, x in zip(vals, exact):
        code, inexact, overflow, underflow = f.quantize(x * inv, negative_zero=math.copysign(1.0, v) < 0)
        codes.append(code)
        flags["inexact"] |= inexact
        flags["overflow"] |= overflow
        flags["saturated"] |= overflow
        flags["underflow"] = merge_underflow(flags["underflow"], underflow)
    return e + 127, codes, flags


def ref_quantize(x, fmt, block, axis=-1):
    """The reference mx_quantize: (element codes, scale codes, flags) as numpy uint8 arrays."""
    x = np.asarray(x)
    axis = axis % x.ndim
    xm = np.moveaxis(x, axis, -1)
    n = xm.shape[-1]
    nb = -(-n // block)
    lines = xm.reshape(-1, n)
    codes = np.zeros(lines.shape, np.uint8)
    scales = np.zeros((lines.shape[0], nb), np.uint8)
    flags = new_flags()
    if fmt == "mxint8":
        flags["underflow"] = None
    for r in range(lines.shape[0]):
        row = [float(v) for v in lines[r]]  # float(np.float32) and float(np.float64) are exact
        for j in range(nb):
            s, c, fl = ref_block(row[j * block:(j + 1) * block], fmt)
            scales[r, j] = s
            codes[r, j * block:j * block + len(c)] = c
            for k in ("inexact", "overflow", "saturated", "mapped_special", "special_blocks"):
                flags[k] |= fl[k]
            flags["underflow"] = merge_underflow(flags["underflow"], fl["underflow"])
    codes = np.moveaxis(codes.reshape(xm.shape), -1, axis)
    scales = np.moveaxis(scales.reshape(xm.shape[:-1] + (nb,)), -1, axis)
    return codes, scales, flags


def ref_dequantize(codes, scales, fmt, block, axis=-1):
    f = FMT[fmt]
    codes, scales = np.asarray(codes), np.asarray(scales)
    axis = axis % codes.ndim
    cm = np.moveaxis(codes, axis, -1)
    sm = np.moveaxis(scales, axis, -1)
    n = cm.shape[-1]
    lines, slines = cm.reshape(-1, n), sm.reshape(-1, sm.shape[-1])
    out = np.zeros(lines.shape, np.float64)
    for r in range(lines.shape[0]):
        for i in range(n):
            s = scale_value(int(slines[r, i // block]))
            v = f.value_float(int(lines[r, i]))
            out[r, i] = NAN if math.isnan(s) else s * v  # exact: a power of two times a short value
    return np.moveaxis(out.reshape(cm.shape), -1, axis)


def round_binary(x, p, emin, emax):
    """Round the Fraction x to the binary format with p bits of precision, nearest even.
    Returns (float, inexact, overflow); overflow gives +-inf."""
    if x == 0:
        return 0.0, False, False
    a = abs(x)
    e = max(floor_log2(a), emin)
    n = rne_int(a / pow2(e - p + 1))
    r = n * pow2(e - p + 1)
    if r >= pow2(emax + 1):
        return (INF if x > 0 else -INF), True, True
    v = math.ldexp(n, e - p + 1)
    return (v if x > 0 else -v), r != a, False


ACCUM = {"binary32": (24, -126, 127), "binary64": (53, -1022, 1023)}


def ref_matmul(a_codes, a_scales, fa, b_codes, b_scales, fb, block, accumulate="binary32"):
    """a: [M, K] blocked along axis 1 (scales [M, nb]); b: [K, N] blocked along axis 0 (scales [nb, N])."""
    p, emin, emax = ACCUM[accumulate]
    A, B = FMT[fa], FMT[fb]
    M, K = a_codes.shape
    N = b_codes.shape[1]
    nb = -(-K // block)
    out = np.zeros((M, N), np.float64)
    flags = {"inexact": False, "overflow": False, "nan": False}
    av = [[A.values[int(c)] for c in row] for row in a_codes]
    bv = [[B.values[int(b_codes[k, n])] for k in range(K)] for n in range(N)]
    for m in range(M):
        for n in range(N):
            acc = None
            for j in range(nb):
                sa, sb = int(a_scales[m, j]), int(b_scales[j, n])
                lo, hi = j * block, min((j + 1) * block, K)
                pa, pb = av[m][lo:hi], bv[n][lo:hi]
                if sa == 0xFF or sb == 0xFF:
                    d = NAN
                elif all(isinstance(u, Fraction) or u == 0 for u in pa + pb):  # finite (-0.0 is a float)
                    s = sum((Fraction(u) * Fraction(w) for u, w in zip(pa, pb)), Fraction(0))
                    d, inx, ovf = round_binary(s * pow2(sa - 127) * pow2(sb - 127), p, emin, emax)
                    flags["inexact"] |= inx
                    flags["overflow"] |= ovf
                else:  # NaN or infinite element codes: IEEE float arithmetic on the specials
                    d = math.fsum(float(u) * float(w) for u, w in zip(pa, pb))
                if acc is None:
                    acc = d
                elif math.isfinite(acc) and math.isfinite(d):
                    acc, inx, ovf = round_binary(Fraction(acc) + Fraction(d), p, emin, emax)
                    flags["inexact"] |= inx
                    flags["overflow"] |= ovf
                else:
                    acc = acc + d  # inf + finite = inf, inf - inf = NaN, NaN stays
            out[m, n] = acc
            flags["nan"] |= math.isnan(acc)
    return out, flags


# ---------------------------------------------------------------------------------------------
# Comparison helpers
# ---------------------------------------------------------------------------------------------

FLAG_KEYS = ("invalid", "divide_by_zero", "overflow", "underflow", "inexact", "saturated", "mapped_special")


def same_floats(got, want, signed_zero=True):
    """Exact equality, NaN where NaN, optionally -0.0 vs +0.0 told apart."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return False
    gn, wn = np.isnan(got), np.isnan(want)
    if not np.array_equal(gn, wn):
        return False
    if signed_zero:
        return np.array_equal(got[~gn].view(np.uint64), want[~wn].view(np.uint64))
    return np.array_equal(got[~gn], want[~wn])


def first_mismatch(x, got, want):
    bad = np.argwhere(np.asarray(got) != np.asarray(want))
    if bad.size == 0:
        return "no mismatch"
    idx = tuple(bad[0])
    return f"{len(bad)} mismatches; first at {idx}: got {got[idx]!r}, want {want[idx]!r}"


def check_flags(got, want, what=""):
    assert isinstance(got, dict), what
    for k in FLAG_KEYS:
        assert k in got and isinstance(got[k], bool), (what, k, got)
    special = want["special_blocks"]
    for k in ("overflow", "saturated", "mapped_special"):
        assert got[k] == want[k], (what, k, got, want)
    # How a NaN/inf block (mapped to zeros) counts for inexact/underflow is not fixed by the brief.
    if not (special and not want["inexact"]):
        assert got["inexact"] == want["inexact"], (what, "inexact", got, want)
    u = want["underflow"]
    if u == "yes":
        assert got["underflow"], (what, "underflow", got, want)
    elif u == "no" and not special:
        assert not got["underflow"], (what, "underflow", got, want)


def check_quantize(x, fmt, block, axis=-1, what=""):
    """denote's codes, scales, dequantized values and flags against the reference."""
    q = denote.mx_quantize(x, format=fmt, block=block, axis=axis)
    codes, scales, flags = ref_quantize(x, fmt, block, axis)
    what = f"{what} {fmt} block={block} axis={axis} dtype={np.asarray(x).dtype} shape={np.shape(x)}"
    assert q.format == fmt, what
    assert q.block == block, what
    assert q.axis == axis % np.ndim(x), what
    el, sc = np.asarray(q.elements), np.asarray(q.scales)
    assert el.dtype == np.uint8 and el.shape == codes.shape, (what, el.dtype, el.shape)
    assert sc.dtype == np.uint8 and sc.shape == scales.shape, (what, sc.dtype, sc.shape)
    if not np.array_equal(sc, scales):
        xm = np.asarray(x)
        raise AssertionError(f"scales differ, {what}: {first_mismatch(xm, sc, scales)}")
    if not np.array_equal(el, codes):
        bad = tuple(np.argwhere(el != codes)[0])
        raise AssertionError(f"element codes differ, {what}: {first_mismatch(x, el, codes)}; "
                             f"input there {np.asarray(x)[bad]!r}")
    check_flags(q.flags, flags, what)
    want = ref_dequantize(codes, scales, fmt, block, axis)
    got = denote.mx_dequantize(q)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64, what
    assert same_floats(got, want), f"dequantize differs, {what}: {first_mismatch(x, got, want)}"
    raw = denote.mx_dequantize((el, sc), format=fmt, block=block, axis=axis)
    assert same_floats(raw, want), f"raw dequantize differs, {what}"
    return q


# ---------------------------------------------------------------------------------------------
# The reference on hand-computed values (runs without denote)
# ---------------------------------------------------------------------------------------------

def positive_finite(fmt):
    return sorted({v for v in FMT[fmt].values if isinstance(v, Fraction) and v >= 0})


def test_reference_formats_by_hand():
    assert positive_finite("mxfp4_e2m1") == [Fraction(x) for x in ("0", "0.5", "1", "1.5", "2", "3", "4", "6")]
    want_max = {"mxfp8_e4m3": 448, "mxfp8_e5m2": 57344, "mxfp6_e3m2": 28, "mxfp6_e2m3": Fraction(15, 2),
                "mxfp4_e2m1": 6, "mxint8": Fraction(127, 64)}
    want_min_sub = {"mxfp8_e4m3": pow2(-9), "mxfp8_e5m2": pow2(-16), "mxfp6_e3m2": pow2(-4),
                    "mxfp6_e2m3": pow2(-3), "mxfp4_e2m1": pow2(-1), "mxint8": Fraction(1, 64)}
    for fmt in FORMAT_NAMES:
        f = FMT[fmt]
        assert f.maxval == want_max[fmt], fmt
        assert floor_log2(f.maxval) == EMAX_ELEM[fmt], fmt
        assert positive_finite(fmt)[1] == want_min_sub[fmt], fmt
    e4 = FMT["mxfp8_e4m3"]
    assert e4.values[0x7E] == 448 and math.isnan(e4.values[0x7F]) and math.isnan(e4.values[0xFF])
    assert e4.values[0x38] == 1 and e4.values[0x01] == pow2(-9) and e4.values[0x08] == pow2(-6)
    assert sum(1 for v in e4.values if isinstance(v, float) and math.isnan(v)) == 2
    e5 = FMT["mxfp8_e5m2"]
    assert e5.values[0x7C] == INF and e5.values[0xFC] == -INF and e5.values[0x7B] == 57344
    assert sum(1 for v in e5.values if isinstance(v, float) and math.isnan(v)) == 6
    assert FMT["mxfp6_e3m2"].values[0x1F] == 28 and FMT["mxfp6_e3m2"].values[0x3F] == -28
    assert FMT["mxfp6_e2m3"].values[0x1F] == Fraction(15, 2)
    assert FMT["mxfp4_e2m1"].values[0x7] == 6 and FMT["mxfp4_e2m1"].values[0xF] == -6
    assert FMT["mxfp4_e2m1"].values[0x8] == 0 and math.copysign(1, FMT["mxfp4_e2m1"].values[0x8]) < 0
    i8 = FMT["mxint8"]
    assert i8.values[0x80] == -2 and i8.values[0x7F] == Fraction(127, 64) and i8.values[0xFF] == Fraction(-1, 64)
    # Every finite non-negative value has one code, and the sign bit mirrors it.
    for fmt in FLOAT_FORMATS:
        f = FMT[fmt]
        for v, c in f.code_of.items():
            assert f.values[c] == v
            if v != 0:
                assert f.values[c | f.sign_bit] == -v


def test_reference_rounding_by_hand():
    e2m1 = FMT["mxfp4_e2m1"]
    q = lambda f, x: f.quantize(Fraction(x))  # noqa: E731
    assert q(e2m1, "2.5")[:3] == (0x4, True, False)       # tie between 2 and 3 -> 2 (even mantissa)
    assert q(e2m1, "3.5")[:3] == (0x6, True, False)       # tie between 3 and 4 -> 4
    assert q(e2m1, "5")[:3] == (0x6, True, False)         # tie between 4 and 6 -> 4
    assert q(e2m1, "6.9")[:3] == (0x7, True, False)       # nearer 6 than the grid's 8
    assert q(e2m1, "7")[:3] == (0x7, True, True)          # tie 6 / 8 -> 8: saturates to 6
    assert q(e2m1, "-7.5")[:3] == (0xF, True, True)
    assert q(e2m1, "0.25") == (0x0, True, False, "yes")   # tie 0 / 0.5 -> 0
    assert q(e2m1, "-0.25") == (0x8, True, False, "yes")  # -> -0
    assert q(e2m1, "0.26") == (0x1, True, False, "yes")
    assert q(e2m1, "0.75")[:3] == (0x2, True, False)      # tie 0.5 / 1 -> 1 (normal): 'maybe'
    e4 = FMT["mxfp8_e4m3"]
    assert q(e4, 448)[:3] == (0x7E, False, False)
    assert q(e4, 464)[:3] == (0x7E, True, False)          # tie 448 / 480 -> 448
    assert q(e4, 465)[:3] == (0x7E, True, True)
    assert q(e4, Fraction(3, 2**10))[:3] == (0x02, True, False)  # 1.5 * 2^-9: tie 1/2 -> 2 * 2^-9
    e5 = FMT["mxfp8_e5m2"]
    assert q(e5, 61440)[:3] == (0x7B, True, True)         # tie 57344 / 65536 -> 65536: saturates
    assert q(e5, 61439)[:3] == (0x7B, True, False)
    i8 = FMT["mxint8"]
    assert q(i8, Fraction(1, 128))[:3] == (0, True, False)
    assert q(i8, Fraction(3, 128))[:3] == (2, True, False)
    assert q(i8, Fraction(-255, 128))[:3] == ((-127) % 256, True, True)
    assert q(i8, Fraction(-254, 128))[:3] == ((-127) % 256, False, False)
    # Blocks.
    s, c, fl = ref_block([448.0 * 4, -1.0, 0.0, -0.0], "mxfp8_e4m3")
    assert s == 127 + 2 and c[0] == 0x7E and c[1] == 0xA8 and c[2] == 0 and c[3] == 0x80
    s, c, fl = ref_block([6.0, 1.0, 0.5, 0.25], "mxfp4_e2m1")  # amax 6: e = 2 - 2 = 0
    assert s == 127 and c == [0x7, 0x2, 0x1, 0x0] and fl["inexact"] and fl["underflow"] == "yes"
    s, c, fl = ref_block([0.0, -0.0], "mxfp6_e3m2")
    assert s == 0 and c == [0, 0x20] and not fl["inexact"]
    s, c, fl = ref_block([1.0, NAN], "mxint8")
    assert s == 0xFF and c == [0, 0] and fl["mapped_special"]
    s, c, fl = ref_block([1e300, -1e300], "mxfp8_e4m3")
    assert s == 254 and c == [0x7E, 0xFE] and fl["saturated"]
    s, c, fl = ref_block([1e-300], "mxfp8_e4m3")
    assert s == 0 and c == [0] and fl["underflow"] == "yes"
    s, c, fl = ref_block([1.5, -0.75], "mxint8")  # e = 0: 96, -48
    assert s == 127 and c == [96, 256 - 48]
    # Matmul reference: 1 * 1 summed over two blocks of 2.
    a = np.array([[0x38, 0x38, 0x38, 0x38]], np.uint8)
    b = a.T.copy()
    out, fl = ref_matmul(a, np.array([[127, 128]], np.uint8), "mxfp8_e4m3", b,
                         np.array([[127], [126]], np.uint8), "mxfp8_e4m3", 2)
    assert out[0, 0] == 2 + 2 and not fl["inexact"]
    assert round_binary(Fraction(1) + pow2(-24), 24, -126, 127) == (1.0, True, False)
    assert round_binary(Fraction(1) + 3 * pow2(-24), 24, -126, 127) == (1.0 + 2.0**-22, True, False)
    assert round_binary(pow2(128) - pow2(103), 24, -126, 127) == (INF, True, True)
    f32max = float(np.finfo(np.float32).max)
    assert round_binary(pow2(128) - pow2(104), 24, -126, 127) == (f32max, False, False)
    assert round_binary(pow2(128) - pow2(103) - 1, 24, -126, 127) == (f32max, True, False)
    assert round_binary(pow2(-150), 24, -126, 127) == (0.0, True, False)
    assert round_binary(3 * pow2(-151), 24, -126, 127) == (2.0**-149, True, False)


# ---------------------------------------------------------------------------------------------
# denote against the reference
# ---------------------------------------------------------------------------------------------

def random_input(rng, shape, dtype, lo, hi, zeros=True):
    """Values of random sign and mantissa with exponents spread over [lo, hi) (per element), some
    on short grids (so some blocks are exact), some zeros and negative zeros."""
    e = rng.integers(lo, hi, size=shape)
    m = rng.uniform(1.0, 2.0, size=shape)
    short = rng.random(shape) < 0.3
    m = np.where(short, np.floor(m * 8) / 8, m)
    x = np.ldexp(m, e) * np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    if zeros:
        x = np.where(rng.random(shape) < 0.05, 0.0, x)
        x = np.where(rng.random(shape) < 0.03, -0.0, x)
    with np.errstate(all="ignore"):
        return x.astype(dtype)


RANDOM_CASES = [
    # shape, block, axis, dtype, exponent range
    ((64,), 32, 0, np.float32, (-6, 6)),
    ((5, 70), 32, -1, np.float32, (-20, 20)),       # partial last block of 6
    ((70, 3), 32, 0, np.float64, (-30, 10)),        # blocked along axis 0, partial block
    ((2, 19, 3), 8, 1, np.float64, (-8, 8)),        # middle axis, partial block of 3
    ((3, 4, 20), 8, -1, np.float32, (-149, 127)),   # float32's whole range, subnormals included
    ((6, 16), 8, 1, np.float64, (-1074, 1023)),     # float64's whole range: scales clamp both ways
    ((40,), 8, -1, np.float32, (100, 127)),         # large float32 values
    ((40,), 8, -1, np.float32, (-149, -120)),       # float32 subnormals and tiny normals
]


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_random_blocks(fmt):
    rng = np.random.default_rng(1234 + FORMAT_NAMES.index(fmt))
    for shape, block, axis, dtype, (lo, hi) in RANDOM_CASES:
        for rep in range(2):
            x = random_input(rng, shape, dtype, lo, hi)
            check_quantize(x, fmt, block, axis, what=f"random rep {rep}")
    # Narrow blocks (every element near amax): most quotients are normal in the element format.
    x = (rng.standard_normal((4, 32)) * 3).astype(np.float32)
    check_quantize(x, fmt, 32, -1, what="normal values")
    check_quantize(x.astype(np.float64) * 1e-3, fmt, 32, 0, what="normal values, axis 0")


def element_grid_values(fmt):
    """Every finite element value (both signs), as floats."""
    return sorted({float(v) for v in FMT[fmt].values if isinstance(v, Fraction)})


def edge_blocks(fmt):
    """(name, list of floats) blocks built from the element format's own values; each has at least
    one element equal to +-2^emax * something so the scale is known (usually e = 0)."""
    f = FMT[fmt]
    mx = float(f.maxval)
    top = 2.0 ** EMAX_ELEM[fmt]          # an amax that gives e = 0
    blocks = []
    blocks.append(("all zeros", [0.0] * 8))
    blocks.append(("signed zeros", [0.0, -0.0, -0.0, 0.0, -0.0, 0.0, 0.0, -0.0]))
    blocks.append(("max exact", [mx, -mx, mx / 2, -top, top, 0.0, -0.0, 1.0]))
    blocks.append(("max scaled up", [mx * 2.0**40, -mx * 2.0**39, 2.0**40, -0.0, 3 * 2.0**30, 0, 0, 0]))
    blocks.append(("max scaled down", [mx * 2.0**-60, -mx * 2.0**-61, 2.0**-60, 0, 0, 0, 0, 0]))
    # Every finite value of the format at e = 0 (plus the top), in blocks of 8.
    grid = element_grid_values(fmt)
    for i in range(0, len(grid), 7):
        blocks.append((f"grid {i}", [top] + grid[i:i + 7]))
    # Midpoints between neighbouring grid values (ties to even), and just either side.
    pos = [float(v) for v in positive_finite(fmt)]
    mids = [(a + b) / 2 for a, b in zip(pos, pos[1:])]
    for i in range(0, len(mids), 7):
        blocks.append((f"midpoints {i}", [top] + mids[i:i + 7]))
        blocks.append((f"-midpoints {i}", [-top] + [-m for m in mids[i:i + 7]]))
        blocks.append((f"above midpoints {i}", [top] + [math.nextafter(m, INF) for m in mids[i:i + 7]]))
        blocks.append((f"below midpoints {i}", [top] + [math.nextafter(m, 0.0) for m in mids[i:i + 7]]))
    # Past the max: between max and 2^(emax+1) (the amax's binade, so e = 0 still).
    if not f.is_int:
        ulp = 2.0 ** (EMAX_ELEM[fmt] - f.mbits)
        past = [mx + ulp / 4, mx + ulp / 2, math.nextafter(mx + ulp / 2, INF), mx + ulp,
                math.nextafter(2 * top, 0.0), -(mx + ulp / 2), -math.nextafter(mx + ulp / 2, INF)]
    else:
        past = [127.25 / 64, 127.5 / 64, 127.75 / 64, math.nextafter(2.0, 0.0), -127.5 / 64, -2.0 + 2**-40, -1.0]
    for v in past:
        blocks.append((f"past max {v!r}", [v, 1.0, -1.0, 0.5, 0, 0, 0, 0]))
    blocks.append(("all past max", past + [mx]))
    # Quotients in the element format's subnormal range (and below its smallest subnormal).
    if not f.is_int:
        sub = float(pow2(f.emin - f.mbits))  # smallest subnormal
        tiny = [sub, -sub, sub / 2, -sub / 2, sub * 0.75, sub * 1.5, sub * 2.5, sub / 4,
                math.nextafter(sub / 2, INF), sub * 3, float(pow2(f.emin)) * 0.999, sub * 1e-10, 5e-324]
    else:
        tiny = [1 / 64, 1 / 128, -1 / 128, 3 / 128, 1 / 256, math.nextafter(1 / 128, INF), 1e-300]
    for i in range(0, len(tiny), 7):
        blocks.append((f"tiny quotients {i}", [top] + tiny[i:i + 7]))
    blocks.append(("negative tiny only", [-top] + [-t for t in tiny[:7]]))
    # Specials.
    blocks.append(("nan", [1.0, NAN, 2.0, 0, 0, 0, 0, 0]))
    blocks.append(("+inf", [INF, 1.0, 0, 0, 0, 0, 0, -1.0]))
    blocks.append(("-inf", [-INF, -0.0, 0, 0, 0, 0, 0, 0]))
    blocks.append(("inf and nan", [INF, -INF, NAN, 0, 0, 0, 0, 0]))
    return [(name, (vals + [0.0] * 8)[:8] if len(vals) < 8 else vals) for name, vals in blocks]


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_edge_blocks(fmt):
    blocks = edge_blocks(fmt)
    for name, vals in blocks:
        assert len(vals) == 8, name
        x = np.array(vals, np.float64)
        check_quantize(x, fmt, 8, what=f"edge block '{name}' {vals!r}")
        if np.all(~np.isfinite(x) | (np.abs(x) < 3e38)):
            check_quantize(x.astype(np.float32), fmt, 8, what=f"edge block '{name}' (float32)")
    # All of them at once (rows of 8, along axis 1 and, transposed, along axis 0): flags or-ed.
    x = np.array([v for _, v in blocks], np.float64)
    check_quantize(x, fmt, 8, axis=1, what="all edge blocks")
    check_quantize(np.ascontiguousarray(x.T), fmt, 8, axis=0, what="all edge blocks, transposed")
    # The same blocks with a partial last block: every edge row cut to 5 elements, block 4.
    check_quantize(x[:, :5], fmt, 4, axis=1, what="edge blocks, partial")


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_scale_clamps(fmt):
    emax = EMAX_ELEM[fmt]
    cases = [
        ("e = 127 exactly", [2.0 ** (127 + emax), -(2.0 ** (127 + emax)) * 0.75, 1.0, 0.0], 254),
        ("e clamps at 127", [2.0 ** (128 + emax), 1e300, -1e300, 2.0 ** (127 + emax)], 254),
        ("e = -127 exactly", [2.0 ** (-127 + emax), 2.0 ** (-128 + emax), -(2.0 ** (-130 + emax)), 0.0], 0),
        ("e clamps at -127", [2.0 ** (-128 + emax), -(2.0 ** (-129 + emax)), 1e-300, 5e-324], 0),
        ("e = -126", [2.0 ** (-126 + emax) * 1.5, 0.0, -0.0, 2.0 ** -140], 1),
        ("tiny only", [1e-300, -1e-310, 5e-324, -5e-324], 0),
    ]
    for name, vals, scale in cases:
        x = np.array(vals, np.float64)
        q = check_quantize(x, fmt, 4, what=name)
        assert int(np.asarray(q.scales)[0]) == scale, (name, fmt)
    # Whole float32 range in one array, float32 input.
    x = np.array([3.4e38, -1e38, 1.0, 1e-45, -1e-45, 1.17e-38, 0.0, 6e-39], np.float32)
    check_quantize(x, fmt, 2, what="float32 extremes")


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_every_code_decodes(fmt):
    f = FMT[fmt]
    codes = np.arange(f.ncodes, dtype=np.uint8)
    scales = np.full((-(-f.ncodes // 32),), 127, np.uint8)
    got = denote.mx_dequantize((codes, scales), format=fmt, block=32, axis=-1)
    want = np.array([float(v) for v in f.values], np.float64)
    assert got.dtype == np.float64 and got.shape == codes.shape
    for c in range(f.ncodes):
        assert same_floats(got[c:c + 1], want[c:c + 1]), (fmt, hex(c), got[c], want[c])
    # Every scale code on the code of 1.0 (and of -max): 2^(s - 127), NaN at 0xFF.
    one = f.code_of[Fraction(1)]
    neg_max = (f.code_of[f.maxval] | f.sign_bit) if not f.is_int else (-127) % 256
    el = np.tile(np.array([one] * 16 + [neg_max] * 16, np.uint8), (256, 1))
    sc = np.arange(256, dtype=np.uint8).reshape(256, 1)
    got = denote.mx_dequantize((el, sc), format=fmt, block=32, axis=-1)
    want = ref_dequantize(el, sc, fmt, 32, -1)
    assert same_floats(got, want), (fmt, first_mismatch(el, got, want))
    assert got[127, 0] == 1.0 and got[0, 0] == 2.0 ** -127 and got[254, 0] == 2.0 ** 127 and np.isnan(got[255, 0])
    # Along axis 0 too.
    got = denote.mx_dequantize((np.ascontiguousarray(el.T), np.ascontiguousarray(sc.T)), format=fmt, block=32, axis=0)
    assert same_floats(got, want.T), fmt


def test_array_attributes():
    x = np.linspace(-3, 3, 2 * 5 * 9).reshape(2, 5, 9)
    for axis, want_axis in ((-1, 2), (0, 0), (1, 1), (-2, 1)):
        q = denote.mx_quantize(x, format="mxfp6_e2m3", block=4, axis=axis)
        assert q.axis == want_axis and q.block == 4 and q.format == "mxfp6_e2m3"
        shape = list(x.shape)
        shape[want_axis] = -(-shape[want_axis] // 4)
        assert np.asarray(q.scales).shape == tuple(shape)
        assert np.asarray(q.elements).shape == x.shape
        assert set(FLAG_KEYS) <= set(q.flags)
    q = denote.mx_quantize(np.ones(5, np.float32))  # defaults: mxfp8_e4m3, block 32, last axis
    assert q.format == "mxfp8_e4m3" and q.block == 32 and q.axis == 0
    assert np.asarray(q.scales).shape == (1,) and list(np.asarray(q.elements)) == [0x78] * 5  # 256
    assert np.asarray(q.scales)[0] == 127 - 8  # amax 1: e = 0 - 8, P = 2^8


# ---------------------------------------------------------------------------------------------
# mx_matmul
# ---------------------------------------------------------------------------------------------

def check_matmul(A, B, fmt, block, accumulate, what="", check_flags_too=True):
    qa = denote.mx_quantize(A, format=fmt, block=block, axis=1)
    qb = denote.mx_quantize(B, format=fmt, block=block, axis=0)
    if accumulate is None:
        got, flags = denote.mx_matmul(qa, qb)
        accumulate = "binary32"
    else:
        got, flags = denote.mx_matmul(qa, qb, accumulate=accumulate)
    want, wflags = ref_matmul(np.asarray(qa.elements), np.asarray(qa.scales), fmt,
                              np.asarray(qb.elements), np.asarray(qb.scales), fmt, block, accumulate)
    what = f"{what} {fmt} block={block} {accumulate} A{A.shape} B{B.shape}"
    got = np.asarray(got)
    assert got.dtype == np.float64 and got.shape == want.shape, (what, got.dtype, got.shape)
    assert same_floats(got, want, signed_zero=False), f"matmul differs, {what}: {first_mismatch(A, got, want)}"
    if check_flags_too:
        assert isinstance(flags, dict), what
        assert flags["overflow"] == wflags["overflow"], (what, flags, wflags)
        assert flags["inexact"] == wflags["inexact"], (what, flags, wflags)
    return got, flags, want, wflags


MATMUL_FORMATS = ["mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4_e2m1", "mxint8"]


@pytest.mark.parametrize("fmt", MATMUL_FORMATS)
@pytest.mark.parametrize("accumulate", ["binary32", "binary64", None])
def test_matmul_random(fmt, accumulate):
    rng = np.random.default_rng(99 + MATMUL_FORMATS.index(fmt))
    for (M, K, N, block, lo, hi, spread) in [(3, 64, 4, 32, -3, 3, 2), (2, 96, 3, 32, -40, 40, 2),
                                             (4, 40, 2, 8, -10, 10, 2), (3, 24, 3, 8, -126, 126, 2),
                                             (3, 64, 3, 32, -5, 5, 12)]:
        # Per-block magnitudes that differ a lot, so that the binary32 accumulation rounds; a wide
        # spread inside the blocks, so that the blocks' exact dot products need rounding too.
        A = random_input(rng, (M, K), np.float32, -spread, spread, zeros=False)
        B = random_input(rng, (K, N), np.float32, -spread, spread, zeros=False)
        A *= np.repeat(np.ldexp(1.0, rng.integers(lo, hi, (M, -(-K // block)))), block, axis=1)[:, :K].astype(np.float32)
        B *= np.repeat(np.ldexp(1.0, rng.integers(lo, hi, (-(-K // block), N))), block, axis=0)[:K].astype(np.float32)
        check_matmul(A, B, fmt, block, accumulate, what=f"random M={M} K={K} N={N}")


@pytest.mark.parametrize("fmt", ["mxfp8_e4m3", "mxfp8_e5m2", "mxfp4_e2m1", "mxint8"])
def test_matmul_edges(fmt):
    rng = np.random.default_rng(7)
    # The binary32 accumulation differs from the exact sum: 1 + 2^-30 - 1 style cancellation.
    A = np.ones((1, 96), np.float32)
    B = np.zeros((96, 1), np.float32)
    B[0, 0], B[32, 0], B[64, 0] = 2.0 ** 10, 2.0 ** -20, -(2.0 ** 10)
    got, _, want, wflags = check_matmul(A, B, fmt, 32, "binary32", what="cancellation")
    assert wflags["inexact"] and want[0, 0] == 0.0
    got, _, want, _ = check_matmul(A, B, fmt, 32, "binary64", what="cancellation")
    assert want[0, 0] == 2.0 ** -20
    # A block's exact dot product top^2 + min_normal^2 needs rounding (E4M3: 2^16 + 2^-12 in binary32;
    # E5M2: 2^30 + 2^-28 in binary64 too), then a second block adds to the rounded value.
    f = FMT[fmt]
    top = 2.0 ** EMAX_ELEM[fmt]
    small = float(pow2(f.emin)) if not f.is_int else 1 / 64
    A = np.zeros((1, 64), np.float64)
    A[0, 0], A[0, 1], A[0, 32] = top, small, top
    B = A.T.copy()
    B[32, 0] = -top
    got, _, want, wflags = check_matmul(A, B, fmt, 32, "binary32", what="block rounding")
    if fmt == "mxfp8_e4m3":
        assert wflags["inexact"] and want[0, 0] == 0.0
    got, _, want, wflags = check_matmul(A, B, fmt, 32, "binary64", what="block rounding")
    if fmt == "mxfp8_e5m2":
        assert wflags["inexact"] and want[0, 0] == 0.0
    # Overflow of a block's dot product in binary32 (finite in binary64).
    A = np.full((2, 32), 2.0 ** 100, np.float32)
    B = np.full((32, 2), 2.0 ** 100, np.float32)
    B[:, 1] = -(2.0 ** 100)
    got, flags, want, wflags = check_matmul(A, B, fmt, 32, "binary32", what="overflow")
    assert wflags["overflow"] and want[0, 0] == INF and want[0, 1] == -INF
    got, flags, want, wflags = check_matmul(A, B, fmt, 32, "binary64", what="overflow")
    assert not wflags["overflow"] and want[0, 0] == 2.0 ** 205
    # Tiny block results: subnormal and zero in binary32.
    A = np.full((1, 32), 2.0 ** -70, np.float32)
    B = np.full((32, 1), 2.0 ** -75, np.float32)
    B[0, 0] = 1.5 * 2.0 ** -75
    check_matmul(A, B, fmt, 32, "binary32", what="subnormal")
    check_matmul(A, B, fmt, 32, "binary64", what="subnormal")
    # A NaN or an infinity in a block: that block's scale is NaN, so the outputs using it are NaN.
    A = random_input(rng, (3, 64), np.float32, -3, 3)
    B = random_input(rng, (64, 2), np.float32, -3, 3)
    A[0, 5] = np.nan
    B[40, 1] = np.inf
    got, flags, want, _ = check_matmul(A, B, fmt, 32, "binary32", what="nan", check_flags_too=False)
    assert np.all(np.isnan(want[0])) and np.all(np.isnan(want[:, 1])) and not np.any(np.isnan(want[1:, 0]))
    # Scales at both ends of E8M0 (products 2^254 and 2^-254 of the two scales).
    A = np.full((1, 8), 2.0 ** 100, np.float64)
    B = np.full((8, 1), 2.0 ** 120, np.float64)
    check_matmul(A, B, fmt, 8, "binary64", what="big scales")
    check_matmul(A, B, fmt, 8, "binary32", what="big scales")
    A = np.full((1, 8), 2.0 ** -120, np.float64)
    B = np.full((8, 1), 2.0 ** -125, np.float64)
    check_matmul(A, B, fmt, 8, "binary64", what="small scales")
    check_matmul(A, B, fmt, 8, "binary32", what="small scales")


def test_matmul_partial_last_block_e5m2():
    """E5M2 block sums past 2^53 on the certified kernel, K = 70 with blocks of 32 (the last one partial).
    Block 1 (columns 32..63) sums 2^30 + 2^6 + 2^-32: just above a binary32 tie, in binary64 the tie itself.
    Its elements at 32 and 33 are multiples of 2^19 quanta, the one at 50 is a single quantum; a kernel that
    took the blocks' exact divisors over the wrong columns (24..47: K / ceil(K / 32) = 24) would take the
    binary64 sum as exact and round the tie to even: 2^30 instead of 2^30 + 2^7."""
    A = np.zeros((1, 70), np.float64)
    A[0, 32], A[0, 33], A[0, 50] = 2.0 ** 15, 8.0, 2.0 ** -16
    B = A.T.copy()
    got, flags, want, wflags = check_matmul(A, B, "mxfp8_e5m2", 32, "binary32", what="partial last block")
    assert want[0, 0] == 2.0 ** 30 + 2.0 ** 7 and wflags["inexact"]
    # The same block inside a batch of rows and columns (the kernel's row tiles and column panels).
    A = np.tile(A, (6, 1))
    A[1:, 40] = 3.0
    B = np.tile(B, (1, 18))
    check_matmul(A, B, "mxfp8_e5m2", 32, "binary32", what="partial last block, tiles")


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_mx_cast_op_is_the_reference_round_trip(fmt):
    """The IR's mx_cast op (a graph node: quantize and dequantize in one) against this file's exact-rational
    reference, along either axis and with a partial last block, in f64 and f32; and IBP's box of a small box
    around the input holds the value there."""
    rng = np.random.default_rng(77 + FORMAT_NAMES.index(fmt))
    for shape, block, axis in (((3, 40), 32, -1), ((5, 6), 4, 0)):
        x = random_input(rng, shape, np.float32, -20, 20).astype(np.float64)
        b = denote.GraphBuilder()
        node = b.op("mx_cast", b.input(list(shape)), format=fmt, block=block, axis=axis)
        m = b.build(node)
        codes, scales, _ = ref_quantize(x, fmt, block, axis)
        want = ref_dequantize(codes, scales, fmt, block, axis)
        for arith in ("f64", "f32"):
            got = np.asarray(m.run(x, arith=arith), dtype=np.float64)
            assert same_floats(got, want), first_mismatch(x, got, want)
        lo, hi = m.bounds(x - np.abs(x) * 1e-3, x + np.abs(x) * 1e-3, method="ibp", arith="f64")
        assert np.all(lo <= want) and np.all(want <= hi)
