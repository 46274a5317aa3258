"""denote.load / loads, Model's properties, writers and the builder."""
import json
import os
import subprocess

import numpy as np
import pytest

import denote

GOLDEN_MLP = os.path.join("tests", "data", "golden", "composite_mlp_softmax", "model.json")


def test_load_onnx(acas_path):
    m = denote.load(acas_path)
    assert m.inputs == [0]
    assert m.outputs == [16]
    assert m.input_shapes == [[1, 1, 1, 5]]
    assert m.output_shapes == [[1, 5]]
    assert len(m) == 17
    nodes = m.nodes
    assert [n["id"] for n in nodes] == list(range(17))
    assert nodes[3]["op"] == "reshape" and nodes[3]["attrs"] == {"in_shape": [1, 1, 1, 5], "out_shape": [1, 5]}
    assert nodes[4] == {"id": 4, "op": "linear", "parents": [3], "shape": [1, 50], "attrs": {}}
    m.check()


def test_load_json_and_loads(root):
    path = os.path.join(root, GOLDEN_MLP)
    m = denote.load(path)
    text = open(path).read()
    m2 = denote.loads(text)
    assert m.nodes == m2.nodes
    assert m2.nodes[4]["attrs"] == {"axis": 1}


def test_json_round_trip(tmp_path, acas_path):
    m = denote.load(acas_path)
    text = m.to_json()
    assert json.loads(text)["format"] == "torchlean.ir.v1"
    p = tmp_path / "m.json"
    assert m.to_json(str(p)) is None
    m2 = denote.load(str(p))
    assert m2.to_json() == text
    x = np.random.default_rng(1).uniform(-1, 1, (1, 1, 1, 5))
    np.testing.assert_array_equal(m.run(x), m2.run(x))


def test_onnx_round_trip(tmp_path, mlp):
    m = mlp[0]
    p = tmp_path / "m.onnx"
    m.to_onnx(str(p))
    assert isinstance(m.to_onnx(), bytes)
    m2 = denote.load(str(p))
    x = np.array([0.3, -0.2, 0.1, 0.4])
    np.testing.assert_array_equal(m.run(x), m2.run(x))


def test_listing_and_dot_match_cli(cli, acas_path):
    m = denote.load(acas_path)
    out = subprocess.run([cli, "print", acas_path], capture_output=True, text=True, check=True).stdout
    assert m.print() == out
    assert m.print().startswith("0: input parents=[] out=[1, 1, 1, 5]")
    assert m.dot().startswith("digraph")


def test_check_errors_carry_node_and_field():
    doc = {"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [1], "nodes": [
        {"id": 0, "kind": "input", "parents": [], "shape": [4]},
        {"id": 1, "kind": "relu", "parents": [0], "shape": [5]}]}
    with pytest.raises(denote.CheckError) as e:
        denote.loads(json.dumps(doc))
    assert isinstance(e.value, denote.ShapeError)
    assert e.value.node == 1
    assert "outShape mismatch" in str(e.value)
    m = denote.loads(json.dumps(doc), check=False)
    d = m.diagnose()
    assert d and d[0]["node"] == 1 and d[0]["code"] == "shape"
    with pytest.raises(denote.ShapeError):
        m.check()


def test_parse_errors():
    with pytest.raises(denote.ParseError) as e:
        denote.loads("{")
    assert e.value.code == "invalid_input"
    assert isinstance(e.value, ValueError) and isinstance(e.value, denote.Error)
    with pytest.raises(denote.ParseError) as e:
        denote.loads('{"format": "torchlean.ir.v1", "output_ids": [0], "nodes": []}')
    assert e.value.field == "input_id"
    with pytest.raises(denote.ParseError):
        denote.load("/nonexistent/model.onnx")


def test_builder(mlp):
    m, w1, b1, w2, b2 = mlp
    x = np.array([0.3, -0.2, 0.1, 0.4])
    np.testing.assert_allclose(m.run(x), w2 @ np.tanh(w1 @ x + b1) + b2, rtol=1e-13)
    assert [n["op"] for n in m.nodes] == ["input", "linear", "tanh", "linear"]


def test_builder_attrs_and_constants():
    b = denote.GraphBuilder()
    x = b.input([2, 3])
    c = b.constant(np.arange(6.0).reshape(2, 3))
    s = b.op("softmax", b.op("add", x, c), axis=1)
    t = b.op("transpose", s, axis1=0, axis2=1)
    m = b.build(t)
    assert m.nodes[3]["attrs"] == {"axis": 1}
    assert m.nodes[4]["shape"] == [3, 2]
    y = m.run(np.zeros((2, 3)))
    e = np.exp(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(y, (e / e.sum(axis=1, keepdims=True)).T, rtol=1e-14)


def test_builder_errors():
    b = denote.GraphBuilder()
    with pytest.raises(denote.InvalidInputError):
        b.op("no_such_op", 0)
    x = b.input([3])
    with pytest.raises(denote.InvalidInputError):
        b.op("softmax", x, axis=0, bogus=1)
    with pytest.raises(denote.InvalidInputError):
        b.op("softmax", x, axis="one")
    # An int beyond 64 bits says so (not "wrong type int"); a typo in a conv keyword is named as unknown
    # (not reported as a missing spatial_rank).
    with pytest.raises(denote.InvalidInputError, match="does not fit in a 64-bit integer") as e:
        b.op("softmax", x, axis=2**70)
    assert e.value.field == "axis"
    img = b.input([1, 1, 4, 4])
    with pytest.raises(denote.InvalidInputError, match="unknown attribute 'kernal'") as e:
        b.conv(img, np.ones((1, 1, 2, 2)), kernal=[2, 2])
    assert e.value.field == "kernal"
    b.op("add", x, 7)  # an unknown parent: reported by build()
    with pytest.raises(denote.Error):
        b.build([1])


def test_typed_json_model():
    doc = """{"format": "torchlean.ir.v1", "input_ids": [0], "output_ids": [3], "nodes": [
 {"id": 0, "kind": "input", "parents": [], "shape": [2], "dtype": "int8"},
 {"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int8", "words": ["0x7f", 2]},
 {"id": 2, "kind": "add", "parents": [0, 1], "shape": [2]},
 {"id": 3, "kind": "cast", "parents": [2], "shape": [2], "dtype": "binary16", "rounding": "nearest-even"}]}"""
    m = denote.loads(doc)
    assert m.typed
    assert m.nodes[0]["dtype"] == "int8"
    y = m.run(np.array([1, -1], dtype=np.int8))
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, np.array([-128, 1], dtype=np.float16))  # 127 + 1 wraps
    t = m.run(np.array([1, -1], dtype=np.int8), all_nodes=True)
    assert t[2].dtype == np.int8 and list(t[2]) == [-128, 1]
    with pytest.raises(denote.InvalidInputError):
        m.run(np.array([1, -1], dtype=np.int16))
    assert '"words"' in m.to_json()


def test_typed_words_for_dtypes_numpy_lacks():
    doc = """{"format": "torchlean.ir.v1", "input_ids": [0, 1], "output_ids": [2, 4, 5], "nodes": [
 {"id": 0, "kind": "input", "parents": [], "shape": [2], "dtype": "bfloat16"},
 {"id": 1, "kind": "input", "parents": [], "shape": [2], "dtype": "int(12)"},
 {"id": 2, "kind": "add", "parents": [0, 0], "shape": [2]},
 {"id": 3, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int(70)",
  "words": ["0x100000000000000000", 5]},
 {"id": 4, "kind": "add", "parents": [3, 3], "shape": [2]},
 {"id": 5, "kind": "mul_elem", "parents": [1, 1], "shape": [2]}]}"""
    m = denote.loads(doc)
    # bfloat16 words 1.0, 2.0; int(12) words 0xfff (-1) and 2047.
    (a, b, c), flags = m.run(np.array([0x3F80, 0x4000], dtype=np.uint16), np.array([0xFFF, 2047], dtype=np.uint16),
                          return_flags=True)
    assert a.dtype == np.uint64 and list(a) == [0x4000, 0x4080]  # 2.0, 4.0 as bfloat16 words
    assert b.dtype == object and list(b) == [-2 ** 69, 10]       # int(70): exact Python ints (2^69 wraps)
    assert c.dtype == np.uint64 and list(c) == [1, (2047 * 2047) % 4096]  # int(12) words: (-1)^2, wrapped
    assert not flags["inexact"]
    with pytest.raises(denote.InvalidInputError):
        m.run(np.array([1.0, 2.0], dtype=np.float32), np.array([1, 2], dtype=np.uint16))
