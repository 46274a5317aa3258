"""Bad input raises a denote.Error subclass (never a crash), carrying node and field."""
import numpy as np
import pytest

import denote

X = np.zeros((1, 1, 1, 5))


@pytest.fixture(scope="module")
def acas():
    import os
    root = os.environ.get("DENOTE_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
    return denote.load(os.path.join(root, "tests", "data", "acasxu", "ACASXU_run2a_1_1_batch_2000.onnx"))


BAD_RUNS = [
    (lambda m: m.run(np.zeros(6)), denote.Error, "input"),
    (lambda m: m.run(np.zeros((1, 1, 1, 6))), denote.Error, "input"),
    (lambda m: m.run(), denote.InvalidInputError, None),
    (lambda m: m.run(X, X), denote.InvalidInputError, None),
    (lambda m: m.run(X.astype(complex)), denote.InvalidInputError, "dtype"),
    (lambda m: m.run(np.array([["a"] * 5])), denote.InvalidInputError, "dtype"),
    (lambda m: m.run(object()), denote.InvalidInputError, None),
    (lambda m: m.run(X, arith="f16x"), denote.InvalidInputError, "arith"),
    (lambda m: m.run(X, arith="binary(100,100)"), denote.InvalidInputError, "arith"),
    (lambda m: m.run(X, rounding="sideways"), denote.InvalidInputError, "rounding"),
    (lambda m: m.run(X, rounding="upward"), denote.InvalidInputError, "rounding"),
    (lambda m: m.run(X, arith="real", precision=1), denote.InvalidInputError, "precision"),
    (lambda m: m.run(X, return_flags=True), denote.InvalidInputError, "return_flags"),
    (lambda m: m.run(X, provider="bogus"), denote.InvalidInputError, "provider"),
    (lambda m: m.run(X, arith="bfloat16", provider="auto"), denote.UnsupportedError, "arith"),
    (lambda m: m.run(X, max_memory=0), denote.InvalidInputError, "max_memory"),
    (lambda m: m.run(X, max_memory=16), denote.ResourceError, None),
    (lambda m: m.bounds(X, X - 1), denote.InvalidInputError, None),
    (lambda m: m.bounds(X, np.zeros(3)), denote.InvalidInputError, "hi"),
    (lambda m: m.bounds(X, X, method="foo"), denote.InvalidInputError, "method"),
    (lambda m: m.bounds(X, X, method="crown", arith="bfloat16"), denote.InvalidInputError, "arith"),
    (lambda m: m.bounds(X, X, spec=[[1, 2]]), denote.InvalidInputError, "spec"),
    (lambda m: m.bounds(X, X, spec=np.zeros((2, 2, 2))), denote.InvalidInputError, "spec"),
    (lambda m: m.grad(X, cotangent=np.zeros(3)), denote.InvalidInputError, "cotangent"),
    (lambda m: m.grad(X, output=99), denote.InvalidInputError, "output"),
    (lambda m: m.grad(X, wrt="weights"), denote.InvalidInputError, "wrt"),
    (lambda m: m.jvp(X, tangents=np.zeros(2)), denote.Error, None),
    (lambda m: denote.verify(m, "/nonexistent.vnnlib"), denote.ParseError, None),
    (lambda m: denote.verify(m, "/nonexistent.vnnlib", timeout=-1), denote.InvalidInputError, "timeout"),
    (lambda m: denote.verify(m, "/nonexistent.vnnlib", timeout=float("nan")), denote.InvalidInputError, "timeout"),
    (lambda m: m.bounds(X, X, method="alpha-crown", alpha_iters=-1), denote.InvalidInputError, "alpha_iters"),
    (lambda m: m.bounds(X, X, method="alpha-crown", alpha_iters=10**9), denote.InvalidInputError, "alpha_iters"),
    (lambda m: m.plan(device="tpu"), denote.InvalidInputError, "device"),
]


def test_array_errors_say_why(acas):
    class GradTensor:  # what a torch tensor with requires_grad=True looks like to numpy: no conversion
        requires_grad = True

        def __array__(self, *args, **kwargs):
            raise RuntimeError("Can't call numpy() on Tensor that requires grad.")

    with pytest.raises(denote.InvalidInputError, match="requires grad; pass tensor.detach()"):
        acas.run(GradTensor())

    class Huge:  # numpy runs out of memory converting it: a MemoryError, not "expected a numpy array"
        def __array__(self, *args, **kwargs):
            raise MemoryError("no room")

    with pytest.raises(MemoryError):
        acas.run(Huge())


@pytest.mark.parametrize("call,cls,field", BAD_RUNS)
def test_bad_calls_raise(acas, call, cls, field):
    with pytest.raises(cls) as e:
        call(acas)
    assert isinstance(e.value, denote.Error)
    assert e.value.code in {"invalid_input", "structure", "shape", "eval", "unsupported", "resource", "internal"}
    if field is not None:
        assert e.value.field == field
    assert str(e.value) == e.value.message


def test_input_shape_error_names_the_node(acas):
    with pytest.raises(denote.Error) as e:
        acas.run(np.zeros(5))
    assert e.value.node == 0
    assert "expected [1, 1, 1, 5]" in str(e.value)


def test_error_hierarchy():
    assert issubclass(denote.ParseError, denote.InvalidInputError)
    assert issubclass(denote.InvalidInputError, ValueError)
    assert issubclass(denote.ShapeError, denote.CheckError)
    assert issubclass(denote.StructureError, denote.CheckError)
    for cls in (denote.EvalError, denote.UnsupportedError, denote.ResourceError, denote.InternalError):
        assert issubclass(cls, denote.Error)


def test_bad_files(tmp_path):
    p = tmp_path / "junk.onnx"
    p.write_bytes(b"\x00\x01garbage")
    with pytest.raises(denote.ParseError):
        denote.load(str(p))
    q = tmp_path / "junk.json"
    q.write_text('{"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [0], "nodes": [{"id": 0}]}')
    with pytest.raises(denote.ParseError) as e:
        denote.load(str(q))
    assert e.value.field is not None
