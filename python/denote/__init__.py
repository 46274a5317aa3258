"""denote: one neural-network graph IR, checked, evaluated, bounded, verified and planned.

The compiled module ``denote._denote`` (pybind11, over denote's public C++ API) does the work; this
package re-exports it. See docs/PYTHON.md.

    import numpy as np, denote
    m = denote.load("tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx")
    y = m.run(np.zeros((1, 1, 1, 5)))                  # f64
    y16, flags = m.run(np.zeros((1, 1, 1, 5)), arith="bfloat16", return_flags=True)
    lo, hi = m.bounds(np.zeros((1, 1, 1, 5)) - 0.1, np.zeros((1, 1, 1, 5)) + 0.1, method="crown")
"""
from ._denote import (  # noqa: F401
    __version__,
    Error,
    InvalidInputError,
    ParseError,
    CheckError,
    StructureError,
    ShapeError,
    EvalError,
    UnsupportedError,
    ResourceError,
    InternalError,
    Model,
    GraphBuilder,
    load,
    loads,
    verify,
    check_certificate,
    tune_allocator,
    format_op,
)
from ._mx import MxArray, mx_quantize, mx_dequantize, mx_matmul  # noqa: F401
from . import _batch

_batch.install(Model)  # Model.run / Model.grad on a leading batch axis (bounds takes it in C++)


def from_torch(module, example_inputs, *args, **kwargs):
    """Captures a torch.nn.Module as a denote Model (see docs/TORCH_CAPTURE.md).

    torch is imported only when this is called, never by ``import denote``.
    """
    from .torch_capture import from_torch as _from_torch
    return _from_torch(module, example_inputs, *args, **kwargs)


__all__ = [
    "Error", "InvalidInputError", "ParseError", "CheckError", "StructureError", "ShapeError", "EvalError",
    "UnsupportedError", "ResourceError", "InternalError", "Model", "GraphBuilder", "load", "loads", "verify",
    "tune_allocator", "format_op", "from_torch", "__version__", "MxArray", "mx_quantize", "mx_dequantize",
    "mx_matmul",
]
