"""denote.from_torch / torch_capture.capture_json: PyTorch modules captured through torch.fx must
give PyTorch's outputs (float64: within 1e-12 relative to the output's scale, i.e. equal up to
summation order; float32 modules run with arith f32: within F32_ULPS ulps of the output's scale).

Runs through the compiled module (``denote.from_torch(...).run(...)``) when ``denote.loads`` is
importable, else through the CLI (``build/bin/denote run --json``) on the document that
``capture_json`` writes. Skipped without torch. Run with /usr/bin/python3 -m pytest.
"""

import importlib
import json
import os
import subprocess
import sys
import tempfile
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional
torch.set_num_threads(1)
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DENOTE_BIN = os.environ.get("DENOTE_BIN", os.path.join(ROOT, "build", "bin", "denote"))
F64_REL = 1e-12   # |denote - torch| <= F64_REL * max|torch output| (+ the same relative to the element)
F32_ULPS = 32     # |denote - torch| <= F32_ULPS * ulp_f32(max|torch output|)


def _load():
    """(compiled denote package or None, torch_capture module).

    The capture is the checkout's python/denote/torch_capture.py (the build's copy may be older),
    loaded in a bare package that borrows loads/Error/UnsupportedError from the compiled module
    when it is importable; DENOTE_TEST_INSTALLED=1 tests the importable package's own copy,
    DENOTE_TEST_CLI=1 ignores the compiled module (CLI only)."""
    denote = None
    try:
        try:
            import denote  # on PYTHONPATH
        except ImportError:
            build_py = os.path.join(ROOT, "build", "python")
            if os.path.isdir(build_py) and build_py not in sys.path:
                sys.path.insert(0, build_py)
            import denote
        denote.loads  # noqa: B018 - the compiled module is present
    except (ImportError, AttributeError):
        denote = None
    if os.environ.get("DENOTE_TEST_CLI") == "1":  # exercise the CLI fallback alone
        denote = None
    if denote is not None and os.environ.get("DENOTE_TEST_INSTALLED") == "1":
        from denote import torch_capture
        return denote, torch_capture
    pkg = types.ModuleType("denote_capture_src")
    pkg.__path__ = [os.path.join(ROOT, "python", "denote")]
    for name in ("loads", "Error", "UnsupportedError"):
        if denote is not None and hasattr(denote, name):
            setattr(pkg, name, getattr(denote, name))
    sys.modules["denote_capture_src"] = pkg
    return denote, importlib.import_module("denote_capture_src.torch_capture")


DENOTE, TC = _load()
MODE = "module" if DENOTE is not None else "cli"


def _need_cli():
    if not os.path.exists(DENOTE_BIN):
        pytest.skip("no denote binary at " + DENOTE_BIN)


def _cli(*args, check=True):
    _need_cli()
    r = subprocess.run([DENOTE_BIN] + list(args), capture_output=True, text=True, timeout=300)
    if check and r.returncode != 0:
        raise AssertionError("denote {} failed ({}):\n{}{}".format(" ".join(args), r.returncode, r.stdout, r.stderr))
    return r


def run_cli(text, inputs, arith="f64"):
    """Evaluates a captured document with `denote run --json`; returns the list of outputs."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.json")
        with open(path, "w") as f:
            f.write(text)
        argv = ["run", path, "--arith", arith, "--json"]
        for i, x in enumerate(inputs):
            p = os.path.join(d, "in{}.npy".format(i))
            np.save(p, np.ascontiguousarray(x, dtype=np.float64))
            argv += ["--input", "@" + p]
        out = json.loads(_cli(*argv).stdout)
    return [np.array([float(v) for v in o["values"]], dtype=np.float64).reshape(o["shape"]) for o in out["outputs"]]


def run_denote(module, inputs, arith="f64", mode=MODE):
    """Captures `module` on `inputs` (torch tensors) and evaluates it in denote; list of outputs."""
    if mode == "module":
        model = TC.from_torch(module, tuple(inputs))
        res = model.run(*[x.detach().numpy().astype(np.float64) for x in inputs], arith=arith)
        res = list(res) if isinstance(res, tuple) else [res]
        return [np.asarray(r, dtype=np.float64) for r in res]
    text = TC.capture_json(module, tuple(inputs))
    return run_cli(text, [x.detach().numpy() for x in inputs], arith)


def torch_outputs(module, inputs):
    with torch.no_grad():
        y = module(*inputs)
    ys = list(y) if isinstance(y, (tuple, list)) else [y]
    return [t.detach().numpy() for t in ys]


def assert_f64_close(got, ref):
    assert got.shape == ref.shape, (got.shape, ref.shape)
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    err = np.abs(got - ref)
    bound = F64_REL * (scale + np.abs(ref)) + 1e-300
    worst = float(np.max(err / bound)) if ref.size else 0.0
    assert np.all(err <= bound), "max |diff| = {:.3e} (scale {:.3e}), {:.2f}x the bound".format(
        float(err.max()), scale, worst)


def f32_ulps(got, ref):
    """|got - ref| in ulps of float32 at the output's scale (max |ref|), elementwise maximum."""
    scale = np.float32(np.max(np.abs(ref))) if ref.size else np.float32(1)
    ulp = float(np.spacing(max(scale, np.float32(np.finfo(np.float32).tiny))))
    return float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64)))) / ulp if ref.size else 0.0


def f32_elem_ulps(got, ref):
    """The largest elementwise distance in float32 ulps (ordered-integer difference)."""
    def ordered(a):
        i = np.asarray(a, dtype=np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return int(np.max(np.abs(ordered(got) - ordered(ref)))) if ref.size else 0


def check_f64(module, inputs, mode=MODE):
    module = module.double().eval()
    inputs = [x.double() for x in inputs]
    refs = torch_outputs(module, inputs)
    gots = run_denote(module, inputs, "f64", mode)
    assert len(gots) == len(refs)
    for g, r in zip(gots, refs):
        assert_f64_close(g, r)


def check_f32(module, inputs, mode=MODE):
    module = module.float().eval()
    inputs = [x.float() for x in inputs]
    refs = torch_outputs(module, inputs)
    gots = run_denote(module, inputs, "f32", mode)
    worst = 0.0
    for g, r in zip(gots, refs):
        assert g.shape == r.shape
        # every value denote returns in f32 arithmetic is a float32
        assert np.array_equal(g, g.astype(np.float32).astype(np.float64))
        u = f32_ulps(g, r)
        print("f32: max |diff| = {:.1f} ulps of the output scale, {} ulps elementwise".format(u, f32_elem_ulps(g, r)))
        worst = max(worst, u)
    assert worst <= F32_ULPS, worst
    return worst


# --- models ---------------------------------------------------------------------------------

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 16), nn.Linear(16, 16)
        self.fc3, self.fc4 = nn.Linear(16, 12), nn.Linear(12, 5)
        self.norm = nn.LayerNorm(16)
        self.act = nn.Sequential(nn.ReLU(), nn.Dropout(0.3), nn.Identity())
        self.gelu, self.softplus, self.tanh, self.sig = nn.GELU(), nn.Softplus(), nn.Tanh(), nn.Sigmoid()
        self.out = nn.LogSoftmax(dim=-1)

    def forward(self, x):
        h = self.act(self.fc1(x))
        h = self.gelu(self.norm(self.fc2(h)))
        h = self.softplus(h) - 0.5 * self.tanh(h)
        h = self.sig(self.fc3(h)) * 2.0
        return self.out(self.fc4(h))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, padding=2, dilation=2, groups=4)
        self.bn2 = nn.BatchNorm2d(8, affine=False)
        self.pool = nn.MaxPool2d(2)
        self.avg = nn.AvgPool2d(3, stride=1, padding=1)
        self.c3 = nn.Conv2d(8, 6, (2, 3), stride=(1, 2), padding=(1, 0), bias=False)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(6 * 4 * 1, 10)
        self.sm = nn.Softmax(dim=1)

    def forward(self, x):
        h = self.pool(torch.relu(self.bn1(self.c1(x))))
        h = self.avg(torch.tanh(self.bn2(self.c2(h))))
        h = F.relu(self.c3(h))
        return self.sm(self.fc(self.flat(h)))


class Conv1dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(2, 6, 5, padding="same", dilation=1)
        self.c2 = nn.Conv1d(6, 6, 4, padding="same", groups=3)  # even kernel: asymmetric padding
        self.c3 = nn.Conv1d(6, 4, 3, stride=2, dilation=2, padding=3)
        self.bn = nn.BatchNorm1d(4)
        self.p = nn.MaxPool1d(3, stride=2, padding=1)
        self.a = nn.AvgPool1d(2)
        self.g = nn.AdaptiveAvgPool1d(1)

    def forward(self, x):
        h = torch.sigmoid(self.c2(F.gelu(self.c1(x))))
        h = self.bn(self.c3(h))
        return self.g(self.a(self.p(h))).flatten(1)


class Block(nn.Module):
    """Pre-norm transformer block: single-head attention then a GELU MLP, residuals."""

    def __init__(self, d=16, hidden=32):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(d, hidden), nn.Linear(hidden, d)
        self.gelu, self.drop = nn.GELU(), nn.Dropout(0.1)
        self.scale = d ** -0.5

    def forward(self, x):
        h = self.ln1(x)
        q, k, v = self.q(h), self.k(h), self.v(h)
        att = F.softmax(q @ k.transpose(-2, -1) * self.scale, dim=-1)
        x = x + self.drop(self.o(torch.matmul(att, v)))
        return x + self.fc2(self.gelu(self.fc1(self.ln2(x))))


class MultiHead(nn.Module):
    """Two heads by reshape/permute, concatenated; mean pooling over tokens."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.h = heads
        self.qkv = nn.ModuleList(nn.Linear(d, d) for _ in range(3))
        self.ln = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)

    def forward(self, x):
        b, t, d = x.shape[0], x.size(1), x.size()[-1]   # static: folded from the example's shape
        q, k, v = [m(x).view(b, t, self.h, d // self.h).permute(0, 2, 1, 3) for m in self.qkv]
        att = (q.matmul(k.transpose(2, 3)) / (d // self.h) ** 0.5).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        y = torch.cat([self.ln(y), y.exp()], dim=-1)
        return y.mean(dim=1), y.sum(dim=(0, 2), keepdim=True)


class TensorOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 3))
        self.register_buffer("c", torch.randn(3))

    def forward(self, x, y):
        a = x @ self.w + self.c                    # parameter operands become const nodes
        a = 1.5 - a * 2 + a / 3.0                  # Python scalars on either side
        b = torch.flatten(y.permute(0, 2, 1), 1)   # [2, 15]
        s = b.sum(-1, keepdim=True) + b.mean(dim=(0, 1))
        e = torch.exp(torch.sigmoid(a)) + torch.log(x.abs() + 1).sum(dim=1, keepdim=True)
        a = torch.clamp(a, -1.0, 2.0) + F.hardtanh(a) + a.clamp(min=0.1) + torch.ones(3)  # torch.ones: a const
        z = torch.cat((torch.tanh(e), torch.relu(a), s.view(2, 1).expand(2, 3)), dim=1)
        z = z.reshape(2, 3, 3).transpose(1, 2).contiguous().view(2, 9)
        return torch.stack([z, -z ** 2], dim=0).mean(), z.pow(3) - z.sum(0) * (x.sum() ** 2)


class Zoo(nn.Module):
    """Less common configurations and call forms, each next to the others."""

    def __init__(self):
        super().__init__()
        self.c3 = nn.Conv3d(2, 4, (2, 3, 1), stride=(1, 2, 1), padding=(1, 0, 1), groups=2)
        self.ad = nn.AdaptiveAvgPool2d((None, 2))
        self.ap = nn.AvgPool1d(3, stride=2, padding=1)
        self.w = nn.Parameter(torch.randn(5, 4))
        self.b = nn.Parameter(torch.randn(5))
        self.g = nn.Parameter(torch.rand(4) + 0.5)
        self.unflat = nn.Unflatten(1, (2, 2))
        self.ht, self.r6 = nn.Hardtanh(-0.5, 0.75), nn.ReLU6()

    def forward(self, v, x):
        h = self.c3(v)                                          # [1, 4, 4, 2, 4]
        h = h.sum(dim=3)                                        # [1, 4, 5, 6]
        p = F.max_pool2d(h, (3, 2), stride=(1, 2), padding=(1, 1))   # [1, 4, 5, 4]
        q = self.ad(h).squeeze(-1).squeeze(0)                   # [4, 5, 2]
        r = self.ap(h.flatten(2))                               # [1, 4, 15]
        a = F.linear(x, self.w, self.b).T                       # [5, 3]
        y = F.layer_norm(x, (4,), self.g, None, 1e-3)           # [3, 4]
        y = torch.stack([y, y.mT.t() * 0.5, self.unflat(x).reshape(3, 4)], dim=-1)   # [3, 4, 3]
        m1 = y.mean(dim=(0, 2), keepdim=True) + y.sum(dim=None, keepdim=True) - y.sum(-1, True)
        d = torch.div(x, 0.3, rounding_mode="floor") + (x * 3).div(1.7, rounding_mode="trunc")
        e = x.pow(3) + x ** -2 + 2 ** x + torch.reciprocal(x) + torch.rsub(x, 1.0) + x.abs() ** 2.5
        f = self.ht(e) + self.r6(e * 4) + x.clamp_max(0.2) + F.relu6(x) + F.hardtanh(x)
        g = torch.log_softmax(p, dim=1) + p.unsqueeze(0).transpose(-1, 1).transpose(1, -1).squeeze(0)
        return (g.mean(), q @ q.transpose(-1, -2), r.expand(2, -1, -1), a, m1, d + f,
                torch.cos(torch.sin(e)) + torch.erf(e).sqrt().rsqrt() + torch.erf(d))


class Activations(nn.Module):
    """The activations lowered into several IR ops (SiLU, LeakyReLU at slopes inside and outside [0, 1],
    ELU, Hardsigmoid, Hardswish, tanh-GELU), as modules and as functions."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8)
        self.acts = nn.ModuleList([nn.SiLU(), nn.LeakyReLU(), nn.LeakyReLU(-0.3), nn.LeakyReLU(2.0), nn.ELU(0.7),
                                   nn.Hardsigmoid(), nn.Hardswish(), nn.GELU(approximate="tanh")])

    def forward(self, x):
        h = self.fc(x) * 4  # values on both sides of every kink, and past hardswish's +-3
        out = [a(h) for a in self.acts]
        out += [F.silu(h), F.leaky_relu(h, 0.2), F.elu(h), F.hardsigmoid(h), F.hardswish(h),
                F.gelu(h, approximate="tanh")]
        return torch.stack(out, dim=0)


class Slicing(nn.Module):
    """Indexing with ints (negative too), slices with steps, None and ..., and chunk / split / unbind /
    narrow, whose tuples are indexed."""

    def forward(self, x):                                   # [4, 6, 5]
        a = x[1:, ::2, -1] + x[..., 0][:3, None, 1:4].squeeze(1)     # [3, 3]
        b = x[-2, 1:5:3] * x[None, 0, 2:4, ...].sum()           # [2, 5]
        c = x.chunk(3, dim=1)                               # [4, 2, 5] each (fx cannot unpack it)
        c1, c2, c3 = c[0], c[1], c[2]
        s = torch.split(x, [1, 3], dim=0)                   # [1, 6, 5], [3, 6, 5]
        u = x.unbind(2)                                     # five [4, 6]
        n = torch.narrow(x, 2, 1, 3)                        # [4, 6, 3]
        d = (c1 - c3 * c2).sum(dim=1) + s[1].mean(0)[:, :5].sum(0) + u[4][:, :5].sum(0) + n[..., -1].sum(1)[:, None]
        return a, b, d


def _mlp_inputs():
    return [torch.randn(3, 6)]


def _cnn_inputs():
    return [torch.randn(2, 3, 12, 10)]


def _set_bn_stats(module):
    for m in module.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    return module


CASES = {
    "mlp": (lambda: MLP(), _mlp_inputs),
    "cnn": (lambda: _set_bn_stats(CNN()), _cnn_inputs),
    "conv1d": (lambda: _set_bn_stats(Conv1dNet()), lambda: [torch.randn(2, 2, 20)]),
    "transformer_block": (lambda: Block(), lambda: [torch.randn(1, 5, 16)]),
    "multihead": (lambda: MultiHead(), lambda: [torch.randn(1, 4, 8)]),
    "tensor_ops": (lambda: TensorOps(), lambda: [torch.randn(2, 4), torch.randn(2, 3, 5)]),
    "zoo": (lambda: Zoo(), lambda: [torch.randn(1, 2, 4, 5, 4), torch.rand(3, 4) + 0.1]),
    "activations": (lambda: Activations(), lambda: [torch.randn(5, 6)]),
    "slicing": (lambda: Slicing(), lambda: [torch.randn(4, 6, 5)]),
}


def _case(name, seed=0):
    torch.manual_seed(seed)
    make, inputs = CASES[name]
    return make(), inputs()


@pytest.mark.parametrize("name", sorted(CASES))
def test_f64_matches_torch(name):
    for seed in range(2):
        m, xs = _case(name, seed)
        check_f64(m, xs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_f32_matches_torch_within_ulps(name):
    m, xs = _case(name, 3)
    check_f32(m, xs)


@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer_block"])
def test_cli_path(name):
    """The CLI fallback evaluates the same document (also when the module is present)."""
    m, xs = _case(name, 5)
    check_f64(m, xs, mode="cli")


@pytest.mark.parametrize("name", sorted(CASES))
def test_document_passes_check(name):
    m, xs = _case(name)
    text = TC.capture_json(m.double().eval(), [x.double() for x in xs])
    doc = json.loads(text)
    assert doc["format"] == "torchlean.ir.v1"
    assert [n["id"] for n in doc["nodes"]] == list(range(len(doc["nodes"])))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.json")
        with open(path, "w") as f:
            f.write(text)
        r = _cli("check", path, "--json")
        assert json.loads(r.stdout)["ok"] is True


def test_f32_weights_are_exact():
    torch.manual_seed(1)
    lin = nn.Linear(3, 2)
    doc = json.loads(TC.capture_json(lin, torch.randn(1, 3)))
    w = np.array(doc["nodes"][1]["weight"], dtype=np.float64)
    assert np.array_equal(w, lin.weight.detach().double().numpy())
    assert np.array_equal(w.astype(np.float32).astype(np.float64), w)


def test_parameters_bypass_the_json_text():
    """from_torch hands the large tensors over as arrays ({"array": k} in the document): the same model
    as the JSON text with every value listed."""
    if DENOTE is None or not hasattr(DENOTE, "loads"):
        pytest.skip("the compiled module is not importable")
    torch.manual_seed(2)
    m = nn.Sequential(nn.Linear(40, 30), nn.ReLU(), nn.Identity(),
                      nn.Linear(30, 10)).eval()
    x = torch.randn(2, 40)
    arrays = []
    text = TC._capture(m, (x,), arrays)
    assert len(arrays) == 2 and '"weight": {"array": 0}' in text  # the two weights (40*30, 30*10)
    via_arrays = DENOTE.loads(text, arrays=arrays)
    via_text = DENOTE.loads(TC.capture_json(m, (x,)))
    assert via_arrays.nodes == via_text.nodes
    xs = np.random.default_rng(0).standard_normal((2, 40))
    np.testing.assert_array_equal(via_arrays.run(xs), via_text.run(xs))
    np.testing.assert_array_equal(DENOTE.from_torch(m, (x,)).run(xs), via_text.run(xs))
    with pytest.raises(DENOTE.Error, match="array 1 is not one of the 1 arrays"):
        DENOTE.loads(text, arrays=arrays[:1])


class Unsupported(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.mish = nn.Mish()
        self.logsig = nn.LogSigmoid()
        self.sp = nn.Softplus(beta=2.0)
        self.bn = nn.BatchNorm1d(6)          # left in training mode
        self.pool = nn.MaxPool1d(2, ceil_mode=True)

    def forward(self, x):
        h = self.mish(self.fc(x))
        h = self.logsig(h) + self.sp(h)
        parts = h.chunk(2, dim=-1)
        h = torch.cat([parts[0] * 2, torch.cumsum(h[:, 3:], 1)], -1)
        h = self.pool(self.bn(h).unsqueeze(1))
        return F.selu(h)


def test_unsupported_calls_are_all_listed():
    m = Unsupported()
    m.bn.train()
    with pytest.raises(ValueError) as info:
        TC.capture_json(m, torch.randn(3, 4))
    err = info.value
    msg = str(err)
    expected = [("mish", "torch.nn.Mish"), ("logsig", "torch.nn.LogSigmoid"), ("sp", "beta=2.0"),
                ("cumsum", "torch.cumsum"), ("bn", "training mode"), ("pool", "ceil_mode=True"),
                ("selu", "selu")]
    for node, what in expected:
        assert "node '{}'".format(node) in msg, msg
        assert any(name == node and what in text for name, text in err.problems), (node, what, err.problems)
    # supported calls are not listed (fc, add, cat, unsqueeze)
    assert {name for name, _ in err.problems} == {n for n, _ in expected}, err.problems
    assert msg.startswith("denote.from_torch: 7 unsupported calls"), msg
    assert isinstance(err, TC.CaptureError)
    if DENOTE is not None and hasattr(DENOTE, "Error"):
        assert isinstance(err, DENOTE.Error)
        if hasattr(DENOTE, "UnsupportedError"):
            assert isinstance(err, DENOTE.UnsupportedError)
        with pytest.raises(DENOTE.Error):
            TC.from_torch(m, (torch.randn(3, 4),))


def test_recurrent_and_attention_modules_are_refused_by_name():
    class Rec(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 3, batch_first=True)
            self.att = nn.MultiheadAttention(4, 2, batch_first=True)

        def forward(self, x):
            return self.lstm(x)[0].sum() + self.att(x, x, x)[0]

    with pytest.raises(ValueError) as info:
        TC.capture_json(Rec().eval(), torch.randn(1, 5, 4))
    problems = dict(info.value.problems)
    assert "recurrent modules" in problems["lstm"] and "torch.nn.LSTM" in problems["lstm"], problems
    assert "Linear, matmul and softmax" in problems["att"], problems
    assert "unsupported call above" in problems["getitem"], problems


def test_untraceable_module_is_an_error():
    class Branchy(nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x

    with pytest.raises(ValueError, match="cannot be traced"):
        TC.capture_json(Branchy(), torch.randn(2))


def test_several_inputs_and_outputs():
    class Two(nn.Module):
        def forward(self, a, b):
            return a * b, (a - b).sum(dim=0)

    a, b = torch.randn(3, 2, dtype=torch.float64), torch.randn(2, dtype=torch.float64)
    doc = json.loads(TC.capture_json(Two(), (a, b)))
    assert doc["input_ids"] == [0, 1] and len(doc["output_ids"]) == 2
    check_f64(Two(), [a, b])


def test_inplace_calls():
    class InPlace(nn.Module):
        def __init__(self):
            super().__init__()
            self.chain = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True))  # sole reader: fine
            self.r = nn.ReLU(inplace=True)

        def forward(self, x):
            h = self.chain(x)
            y = self.r(h)        # h is read again below
            h.mul_(2)            # in-place method
            return y + h

    with pytest.raises(ValueError) as info:
        TC.capture_json(InPlace(), torch.randn(2, 3))
    assert {name for name, _ in info.value.problems} == {"r", "mul_"}, info.value.problems
    check_f64(nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 2)), [torch.randn(2, 3)])


def test_capture_leaves_the_module_unchanged():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Dropout(0.5))  # training mode
    x = torch.randn(5, 3)
    before = [b.clone() for b in m.buffers()]
    state = torch.random.get_rng_state()
    with pytest.raises(ValueError) as info:
        TC.capture_json(m, x)
    assert {name for name, _ in info.value.problems} == {"_1", "_2"}, info.value.problems
    assert "[submodule '1']" in str(info.value)
    assert all(torch.equal(a, b) for a, b in zip(before, m.buffers()))
    assert torch.equal(state, torch.random.get_rng_state())
    check_f64(m.eval(), [torch.randn(5, 3)])


def test_importing_the_capture_does_not_import_torch():
    code = ("import sys, types, importlib; pkg = types.ModuleType('p'); pkg.__path__ = [{!r}]; "
            "sys.modules['p'] = pkg; importlib.import_module('p.torch_capture'); importlib.import_module('p._fx_ops'); "
            "assert 'torch' not in sys.modules").format(os.path.join(ROOT, "python", "denote"))
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_scalar_consts_and_structure():
    """x * 2.0 lowers to const [] -> broadcast_to -> mul_elem; mean over two dims is one division."""
    class S(nn.Module):
        def forward(self, x):
            return (x * 2.0).mean(dim=(0, 2))

    doc = json.loads(TC.capture_json(S(), torch.randn(2, 3, 4, dtype=torch.float64)))
    kinds = [n["kind"] for n in doc["nodes"]]
    assert kinds == ["input", "const", "broadcast_to", "mul_elem", "permute", "reshape", "reduce_mean"], kinds
    assert doc["nodes"][1]["value_shape"] == [] and doc["nodes"][1]["values"] == 2.0
    assert doc["nodes"][6]["shape"] == [3]
    check_f64(S(), [torch.randn(2, 3, 4)])


def test_softplus_above_the_threshold():
    """PyTorch's Softplus returns x itself above threshold=20; the IR's softplus is x + log1p(e^-x)
    there, at most e^-20 (2.1e-9) above x in f64 and equal to x after rounding to float32."""
    x = torch.tensor([[-30.0, -3.0, -0.5, 0.0, 0.7, 5.0, 19.5, 20.0, 20.25, 25.0, 60.0]], dtype=torch.float64)
    m = nn.Softplus()
    ref = torch_outputs(m, [x])[0]
    got = run_denote(m, [x])[0]
    low = x.numpy() <= 20
    assert_f64_close(got[low], ref[low])
    assert np.all(np.abs(got[~low] - ref[~low]) <= np.exp(-20.0))
    got32 = run_denote(m.float(), [x.float()], "f32")[0]
    ref32 = torch_outputs(m.float(), [x.float()])[0]
    assert np.array_equal(got32[~low], ref32[~low])
    assert f32_elem_ulps(got32[low], ref32[low]) <= 2



def test_package_from_torch():
    """denote.from_torch of the compiled package (its own copy of the capture) runs a model."""
    if DENOTE is None or not hasattr(DENOTE, "from_torch"):
        pytest.skip("the compiled denote module is not importable")
    torch.manual_seed(2)
    m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3), nn.Softmax(-1)).double().eval()
    x = torch.randn(2, 4, dtype=torch.float64)
    model = DENOTE.from_torch(m, (x,))
    assert_f64_close(np.asarray(model.run(x.numpy()), dtype=np.float64), torch_outputs(m, [x])[0])
