#!/usr/bin/env python3
"""auto_LiRPA's IBP, CROWN and alpha-CROWN bounds as golden values for denote's linear bound propagation.

What: writes tests/data/lirpa/crown_golden.json with the output bounds that auto_LiRPA (the reference
implementation of IBP / CROWN / alpha-CROWN, peer checkout in ../shared/peers/auto_LiRPA; only called, never
copied) computes for
  six_node    the seed graph of `denote demo --save DIR` (DIR/six_node.json + DIR/x0.npy):
              tanh(sum(W2 relu(W1 x + b1) + b2)) on the l-inf box x0 +- 0.05; bounds of node 5 (tanh, the graph
              output; auto_LiRPA CROWN gives [0.0247449476, 0.0312019108]) and of node 4 (the sum, before tanh).
  acasxu_1_1_prop_1 / _prop_2
              tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx on the X box of VNN-LIB property 1 / 2
              (prop_N.vnnlib under --vnnlib-dir); C = identity (all 5 outputs) and the property's C
              (prop 1: the row Y_0; prop 2: rows Y_0 - Y_j, j = 1..4).
  mnistfc_256x2_prop_0_0.03
              tests/data/mnistfc/mnist-net_256x2.onnx on the X box of mnistfc/prop_0_0.03.vnnlib; C = identity
              (10 outputs) and the spec rows Y_label - Y_j (j != label, label from the file's comment).
Each (case, C) is bounded by IBP, CROWN and alpha-CROWN (auto_LiRPA's default bound_opts; the alpha-CROWN
options it ran with are read back from BoundedModule.bound_opts and stored under "alpha_crown_options"), in
float64 (the golden values: weights cast exactly from the ONNX float32 / JSON decimals, model.double(),
torch default dtype float64) and in float32 (as a user would run it; the input box rounded to float32).
For CROWN and IBP in float64 the pre-activation box of every ReLU is stored too ("interm").

The ONNX networks are rebuilt in torch from their initializers (python3-onnx); auto_LiRPA 0.7.1 itself has
no ONNX loader (alpha-beta-CROWN uses onnx2pytorch, which Debian does not package). Supported ops: the
chains Sub(const) / Flatten / MatMul(+Add) / Gemm(transB=1) / Relu, mapped to x - c, flatten, nn.Linear, relu.

How to run (offline, single-threaded; Debian packages python3-torch python3-onnx python3-appdirs
python3-graphviz python3-tqdm python3-packaging):

    build/bin/denote demo --save /tmp/ex
    OMP_NUM_THREADS=1 /usr/bin/python3 tests/golden/gen_lirpa_golden.py \
        --lirpa ../shared/peers/auto_LiRPA --demo-dir /tmp/ex --vnnlib-dir ../shared/data

Options: --out PATH (default tests/data/lirpa/crown_golden.json); without --demo-dir the script runs
build/bin/denote demo --save into a temporary directory.
"""
import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
METHODS = ("IBP", "CROWN", "alpha-CROWN")
ALPHA_KEYS = ("iteration", "optimizer", "lr_alpha", "lr_decay", "keep_best", "early_stop_patience",
              "start_save_best", "init_alpha", "fix_interm_bounds", "use_shared_alpha", "enable_alpha_crown",
              "enable_beta_crown", "deterministic")
BOUND_OPT_KEYS = ("sparse_intermediate_bounds", "sparse_intermediate_bounds_with_ibp", "minimum_sparsity",
                  "sparse_features_alpha", "sparse_spec_alpha", "compare_crown_with_ibp",
                  "enable_opt_interm_bounds", "crown_batch_size")


# ---------------------------------------------------------------- inputs


def parse_vnnlib_box(path):
    """X box and the label comment of a simple VNN-LIB file: (lo list, hi list, label or None).

    Only the `(assert (<= X_i v))` / `(assert (>= X_i v))` lines are read; every X_i must get both."""
    lo, hi, label = {}, {}, None
    pat = re.compile(r"\(\s*assert\s*\(\s*(<=|>=)\s+X_(\d+)\s+([-+0-9.eE]+)\s*\)\s*\)")
    with open(path) as f:
        for line in f:
            m = re.search(r"label:\s*(\d+)", line)
            if m and line.lstrip().startswith(";"):
                label = int(m.group(1))
            m = pat.search(line)
            if m:
                (hi if m.group(1) == "<=" else lo)[int(m.group(2))] = float(m.group(3))
    n = max(lo) + 1
    assert sorted(lo) == list(range(n)) and sorted(hi) == list(range(n)), f"{path}: incomplete X box"
    return [lo[i] for i in range(n)], [hi[i] for i in range(n)], label


def onnx_chain(path):
    """The ONNX network as a list of layers: ('sub', c) ('flatten',) ('linear', W [out,in], b) ('relu',);
    weights as float64 numpy arrays (exact copies of the float32 initializers). Returns (input_shape, layers)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    g = onnx.load(path).graph
    init = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in g.initializer}
    inputs = [v for v in g.input if v.name not in init]
    assert len(inputs) == 1, [v.name for v in inputs]
    shape = [max(d.dim_value, 1) for d in inputs[0].type.tensor_type.shape.dim]
    layers, cur = [], inputs[0].name
    for n in g.node:
        assert n.input[0] == cur, f"{path}: not a chain at {n.op_type} {n.input}"
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "Sub":
            layers.append(["sub", init[n.input[1]]])
        elif n.op_type == "Flatten":
            assert attrs.get("axis", 1) == 1
            layers.append(["flatten"])
        elif n.op_type == "MatMul":
            w = init[n.input[1]]
            layers.append(["linear", w.T.copy(), np.zeros(w.shape[1])])
        elif n.op_type == "Add":
            assert layers[-1][0] == "linear" and n.input[1] in init
            layers[-1][2] = layers[-1][2] + init[n.input[1]].reshape(-1)
        elif n.op_type == "Gemm":
            assert attrs.get("transB", 0) == 1 and attrs.get("transA", 0) == 0
            assert attrs.get("alpha", 1.0) == 1.0 and attrs.get("beta", 1.0) == 1.0
            layers.append(["linear", init[n.input[1]].copy(), init[n.input[2]].reshape(-1).copy()])
        elif n.op_type == "Relu":
            layers.append(["relu"])
        else:
            raise SystemExit(f"{path}: unsupported op {n.op_type}")
        cur = n.output[0]
    return shape, layers


def six_node_chain(demo_dir):
    """The seed graph from denote's torchlean.ir.v1 JSON: (input_shape, layers, x0 list)."""
    import numpy as np

    with open(os.path.join(demo_dir, "six_node.json")) as f:
        g = json.load(f)
    assert g["format"] == "torchlean.ir.v1", g["format"]
    kinds = [n["kind"] for n in g["nodes"]]
    assert kinds == ["input", "linear", "relu", "linear", "sum", "tanh"], kinds
    layers = []
    for n in g["nodes"][1:]:
        if n["kind"] == "linear":
            layers.append(["linear", np.array(n["weight"], dtype=np.float64), np.array(n["bias"], dtype=np.float64)])
        else:
            layers.append([n["kind"]])
    x0 = np.load(os.path.join(demo_dir, "x0.npy")).astype(np.float64).reshape(-1)
    return [1, int(x0.size)], layers, [float(v) for v in x0]


# ---------------------------------------------------------------- torch model


def build_model(torch, layers, dtype, upto=None):
    """torch.nn.Module for a layer chain (first `upto` layers only when given), in dtype."""

    class Chain(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ops = []
            mods = []
            for k, layer in enumerate(layers if upto is None else layers[:upto]):
                kind = layer[0]
                if kind == "linear":
                    w, b = layer[1], layer[2]
                    lin = torch.nn.Linear(w.shape[1], w.shape[0])
                    with torch.no_grad():
                        lin.weight.copy_(torch.from_numpy(w))
                        lin.bias.copy_(torch.from_numpy(b))
                    mods.append(lin)
                    self.ops.append(("linear", len(mods) - 1))
                elif kind == "sub":
                    c = layer[1]
                    if c.ndim > 1 and c.shape[0] == 1:
                        c = c.reshape(c.shape[1:])   # a constant without the batch dimension
                    self.register_buffer(f"c{k}", torch.from_numpy(c.copy()))
                    self.ops.append(("sub", f"c{k}"))
                else:
                    self.ops.append((kind, None))
            self.lins = torch.nn.ModuleList(mods)

        def forward(self, x):
            for kind, arg in self.ops:
                if kind == "linear":
                    x = self.lins[arg](x)
                elif kind == "sub":
                    x = x - getattr(self, arg)
                elif kind == "flatten":
                    x = torch.flatten(x, 1)
                elif kind == "relu":
                    x = torch.relu(x)
                elif kind == "sum":
                    x = x.sum(dim=1, keepdim=True)   # keep the batch dimension auto_LiRPA needs
                elif kind == "tanh":
                    x = torch.tanh(x)
                else:
                    raise ValueError(kind)
            return x

    return Chain().to(dtype).eval()


def lirpa_bounds(lirpa, torch, model, shape, lo, hi, C, method, dtype, want_interm=False):
    """(lo list, hi list, interm or None, bounded module) of auto_LiRPA's `method` on the box [lo, hi].

    C: None (identity) or a nested list [rows][outputs]."""
    BoundedModule, BoundedTensor, PerturbationLpNorm = lirpa
    x_lo = torch.tensor(lo, dtype=dtype).reshape(shape)
    x_hi = torch.tensor(hi, dtype=dtype).reshape(shape)
    center = (x_lo + x_hi) / 2
    bm = BoundedModule(model, torch.zeros_like(center), device="cpu")
    x = BoundedTensor(center, PerturbationLpNorm(norm=float("inf"), x_L=x_lo, x_U=x_hi))
    c = None if C is None else torch.tensor(C, dtype=dtype).unsqueeze(0)
    with contextlib.redirect_stdout(io.StringIO()):   # alpha-CROWN prints its early stops
        if method == "IBP":
            with torch.no_grad():
                lb, ub = bm.compute_bounds(x=(x,), C=c, method=method)
        else:
            lb, ub = bm.compute_bounds(x=(x,), C=c, method=method)
    interm = None
    if want_interm:
        interm = []
        for node in bm.nodes():
            if type(node).__name__ == "BoundRelu":
                pre = node.inputs[0]
                interm.append({"relu": node.name, "pre": pre.name,
                               "lo": pre.lower.detach().double().reshape(-1).tolist(),
                               "hi": pre.upper.detach().double().reshape(-1).tolist()})
    return (lb.detach().double().reshape(-1).tolist(), ub.detach().double().reshape(-1).tolist(), interm, bm)


def spec_rows(kind, n_out, label=None):
    if kind == "identity":
        return [[1.0 if j == i else 0.0 for j in range(n_out)] for i in range(n_out)]
    if kind == "row0":
        return [[1.0] + [0.0] * (n_out - 1)]
    rows = []
    for j in range(n_out):
        if j != label:
            r = [0.0] * n_out
            r[label], r[j] = 1.0, -1.0
            rows.append(r)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lirpa", default=os.path.join(ROOT, "..", "shared", "peers", "auto_LiRPA"),
                    help="auto_LiRPA checkout (the directory holding auto_LiRPA/)")
    ap.add_argument("--demo-dir", help="directory written by `denote demo --save` (six_node.json, x0.npy)")
    ap.add_argument("--vnnlib-dir", default=os.path.join(ROOT, "..", "shared", "data"),
                    help="directory with acasxu/prop_N.vnnlib and mnistfc/prop_*.vnnlib")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "lirpa", "crown_golden.json"))
    args = ap.parse_args()

    sys.path.insert(0, os.path.abspath(args.lirpa))
    import torch
    import auto_LiRPA
    from auto_LiRPA import BoundedModule, BoundedTensor
    from auto_LiRPA.perturbations import PerturbationLpNorm

    torch.set_num_threads(1)
    lirpa = (BoundedModule, BoundedTensor, PerturbationLpNorm)

    demo_dir, tmp = args.demo_dir, None
    if demo_dir is None:
        tmp = tempfile.TemporaryDirectory()
        demo_dir = tmp.name
        subprocess.run([os.path.join(ROOT, "build", "bin", "denote"), "demo", "--save", demo_dir],
                       check=True, stdout=subprocess.DEVNULL)

    acas = os.path.join("tests", "data", "acasxu", "ACASXU_run2a_1_1_batch_2000.onnx")
    mnist = os.path.join("tests", "data", "mnistfc", "mnist-net_256x2.onnx")
    cases = []

    shape, layers, x0 = six_node_chain(demo_dir)
    eps = 0.05
    cases.append(dict(name="six_node", network="denote demo --save DIR: DIR/six_node.json", shape=shape,
                      layers=layers, input=dict(source=f"x0 +- {eps} (l-inf), x0 from DIR/x0.npy", x0=x0, eps=eps,
                                                lo=[v - eps for v in x0], hi=[v + eps for v in x0]),
                      specs=[("tanh", "identity", None, "node 5 (tanh, graph output)", None),
                             ("sum", "identity", None, "node 4 (sum, before tanh)", len(layers) - 1)]))
    for prop in (1, 2):
        vnn = os.path.join(args.vnnlib_dir, "acasxu", f"prop_{prop}.vnnlib")
        lo, hi, _ = parse_vnnlib_box(vnn)
        shape, layers = onnx_chain(os.path.join(ROOT, acas))
        spec = ("row0", None) if prop == 1 else ("label", 0)
        cases.append(dict(name=f"acasxu_1_1_prop_{prop}", network=acas, shape=shape, layers=layers,
                          input=dict(source=f"X box of {os.path.relpath(vnn, ROOT)}", lo=lo, hi=hi),
                          specs=[("identity", "identity", None, "all outputs", None),
                                 ("spec", spec[0], spec[1],
                                  "prop 1: Y_0" if prop == 1 else "prop 2: Y_0 - Y_j, j=1..4", None)]))
    vnn = os.path.join(args.vnnlib_dir, "mnistfc", "prop_0_0.03.vnnlib")
    lo, hi, label = parse_vnnlib_box(vnn)
    shape, layers = onnx_chain(os.path.join(ROOT, mnist))
    cases.append(dict(name="mnistfc_256x2_prop_0_0.03", network=mnist, shape=shape, layers=layers,
                      input=dict(source=f"X box of {os.path.relpath(vnn, ROOT)}", lo=lo, hi=hi, label=label),
                      specs=[("identity", "identity", None, "all outputs", None),
                             ("spec", "label", label, f"Y_{label} - Y_j, j != {label}", None)]))

    out_cases, opts = [], None
    for case in cases:
        for tag, kind, label, what, upto in case["specs"]:
            n_out = 1 if case["name"] == "six_node" else case["layers"][-1][1].shape[0]
            C = spec_rows(kind, n_out, label)
            results = []
            for dtype, dname in ((torch.float64, "float64"), (torch.float32, "float32")):
                torch.set_default_dtype(dtype)   # auto_LiRPA's tanh tables and alphas follow the default dtype
                model = build_model(torch, case["layers"], dtype, upto)
                for method in METHODS:
                    want = dname == "float64" and method != "alpha-CROWN"
                    lb, ub, interm, bm = lirpa_bounds(lirpa, torch, model, case["shape"], case["input"]["lo"],
                                                      case["input"]["hi"], None if kind == "identity" else C,
                                                      method, dtype, want_interm=want)
                    row = dict(method=method, dtype=dname, lo=lb, hi=ub)
                    if interm:
                        row["interm"] = interm
                    results.append(row)
                    print(f"{case['name']:28s} {tag:8s} {dname} {method:11s} lo={[round(v, 6) for v in lb[:5]]} "
                          f"hi={[round(v, 6) for v in ub[:5]]}", file=sys.stderr)
                    if opts is None:
                        opts = bm.bound_opts
            torch.set_default_dtype(torch.float32)
            out_cases.append(dict(name=f"{case['name']}/{tag}", network=case["network"], output=what,
                                  input=case["input"], C=C,
                                  C_passed="None (auto_LiRPA identity)" if kind == "identity" else "C [1, rows, outputs]",
                                  results=results))

    alpha = {k: opts["optimize_bound_args"][k] for k in ALPHA_KEYS}
    from auto_LiRPA.utils import reduction_sum
    red = opts["optimize_bound_args"]["loss_reduction_func"]
    alpha["loss_reduction_func"] = "reduction_sum: sum over the spec rows" if red is reduction_sum else repr(red)
    alpha["note"] = ("loss = -sum(lower) (or sum(upper)) over the C rows, one Adam run per side (upper first, then "
                     "lower); alphas: lower ReLU slopes per (start node, spec row, neuron), for the output and for "
                     "every later pre-activation layer (sparse: unstable neurons only), all optimised, "
                     "intermediate bounds recomputed every iteration (fix_interm_bounds only applies to bounds "
                     "passed in as interm_bounds); alpha clipped to [0, 1], initialised from CROWN's slopes")
    alpha["lr_scheduler"] = f"ExponentialLR(gamma=lr_decay={alpha['lr_decay']}) per iteration"
    doc = dict(
        format="denote.lirpa_golden.v1",
        generator="tests/golden/gen_lirpa_golden.py",
        auto_lirpa_version=auto_LiRPA.__version__,
        torch_version=torch.__version__,
        note=("auto_LiRPA defaults; float64 = golden (exact float32 weights cast to float64), float32 = as a user "
              "runs it (input box rounded to float32). alpha-CROWN optimises lower and upper bounds in two "
              "separate runs. interm: pre-activation box of each ReLU after that method (CROWN: auto_LiRPA "
              "backward bounds of IBP-unstable neurons, IBP-stable ones keep their one-step IBP box)."),
        alpha_crown_options=alpha,
        bound_opts={k: (v if not isinstance(v, float) or v < 1e300 else "inf") for k, v in
                    ((k, opts[k]) for k in BOUND_OPT_KEYS)},
        relu_option=opts.get("activation_bound_option", "adaptive"),
        cases=out_cases,
    )
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        text = json.dumps(doc, indent=1)
        # one line per list of numbers
        text = re.sub(r"\[\s*([-+0-9.eE,\s]*?)\s*\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
        f.write(text + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
