"""Shared fixtures of the Python tests (tests/python/, run by the python.pytest CTest with
PYTHONPATH=build/python). Generic: paths of the repository's data, and small models."""
import os

import numpy as np
import pytest

ROOT = os.environ.get("DENOTE_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def data_dir():
    return os.path.join(ROOT, "tests", "data")


@pytest.fixture(scope="session")
def acas_path():
    return os.path.join(ROOT, "tests", "data", "acasxu", "ACASXU_run2a_1_1_batch_2000.onnx")


@pytest.fixture(scope="session")
def cli():
    """The denote CLI (DENOTE_CLI from CTest, else build/bin/denote)."""
    return os.environ.get("DENOTE_CLI") or os.path.join(ROOT, "build", "bin", "denote")


@pytest.fixture
def mlp():
    """A 4-5-3 tanh MLP made with the builder: (model, W1, b1, W2, b2)."""
    import denote
    rng = np.random.default_rng(7)
    w1, b1 = rng.standard_normal((5, 4)), rng.standard_normal(5)
    w2, b2 = rng.standard_normal((3, 5)), rng.standard_normal(3)
    b = denote.GraphBuilder()
    x = b.input([4])
    h = b.op("tanh", b.linear(x, w1, b1))
    y = b.linear(h, w2, b2)
    return b.build([y]), w1, b1, w2, b2
