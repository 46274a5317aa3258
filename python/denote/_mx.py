"""OCP Microscaling (MX) block formats: ``mx_quantize``, ``mx_dequantize``, ``mx_matmul`` (docs/PYTHON.md,
docs/NUMERICS.md "MX block formats").

    q = denote.mx_quantize(x, format="mxfp8_e4m3", block=32, axis=-1)
    q.elements, q.scales            # uint8 element codes (x's shape) and E8M0 scale codes
    y = denote.mx_dequantize(q)     # float64, exactly X * P_i
    v, flags = denote.mx_matmul(qa, qb)   # exact block sums, binary32 accumulation
"""
from . import _denote

FORMATS = ("mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4_e2m1", "mxint8")


class MxArray:
    """An MX-format array: element codes, E8M0 scale codes, and the format, block size and axis.

    ``elements``: numpy uint8 of the array's shape (each code in its low 8, 6 or 4 bits; MXINT8: the
    two's complement byte, value code / 64). ``scales``: numpy uint8, the shape with the axis length n
    replaced by ceil(n / block) (value 2^(code - 127), 0xFF NaN). ``flags``: the IEEE flags the
    conversion raised (inexact, underflow, overflow + saturated, mapped_special for NaN/inf inputs).
    """

    __slots__ = ("elements", "scales", "format", "block", "axis", "flags")

    def __init__(self, elements, scales, format, block=32, axis=-1, flags=None):
        self.elements = elements
        self.scales = scales
        self.format = format
        self.block = int(block)
        self.axis = int(axis) % max(elements.ndim, 1) if elements.ndim else int(axis)
        self.flags = dict(flags or {})

    @property
    def shape(self):
        return self.elements.shape

    def dequantize(self):
        return mx_dequantize(self)

    def _parts(self):
        return (self.elements, self.scales, self.format, self.block, self.axis)

    def __repr__(self):
        return (f"MxArray(format={self.format!r}, shape={tuple(self.shape)}, block={self.block}, "
                f"axis={self.axis})")


def mx_quantize(x, format="mxfp8_e4m3", block=32, axis=-1):
    """Converts a float array to an MX format (OCP MX v1.0 §6.3): per block of ``block`` elements along
    ``axis`` (the last block may be partial), X = 2^(floor(log2 max|V|) - emax_elem) clamped to
    [2^-127, 2^127], and P_i = V_i / X rounded to nearest even and saturated. Returns an MxArray."""
    elements, scales, ax, flags = _denote._mx_quantize(x, format, int(block), int(axis))
    return MxArray(elements, scales, format, block, ax, flags)


def _as_parts(q, format, block, axis, what):
    if isinstance(q, MxArray):
        for name, given, have in (("format", format, q.format), ("block", block, q.block)):
            if given is not None and given != have:
                raise _denote.InvalidInputError(f"{what}: {name} {given!r} differs from the array's {have!r}")
        return q._parts()
    try:
        elements, scales = q
    except (TypeError, ValueError):
        raise _denote.InvalidInputError(f"{what}: expected an MxArray or a pair (elements, scales)") from None
    if format is None:
        raise _denote.InvalidInputError(f"{what}: raw (elements, scales) need format=")
    return (elements, scales, format, 32 if block is None else int(block), -1 if axis is None else int(axis))


def mx_dequantize(q, format=None, block=None, axis=None):
    """The exact values X * P_i of an MxArray (or of a pair (elements, scales) with format, block and
    axis given) as float64; NaN in blocks whose scale is NaN, +-inf for E5M2 infinities."""
    return _denote._mx_dequantize(*_as_parts(q, format, block, axis, "q"))


def mx_matmul(a, b, accumulate="binary32"):
    """The MX matrix product of a [M, K] (blocked along axis 1) and b [K, N] (blocked along axis 0), one
    block size (OCP MX §6.1, §6.2): each block's dot product is exact and rounded once to
    ``accumulate`` (binary32 or wider, nearest even); the blocks are summed there in increasing order.
    Returns (values float64 [M, N], flags)."""
    return _denote._mx_matmul(_as_parts(a, None, None, None, "a"), _as_parts(b, None, None, None, "b"), accumulate)
