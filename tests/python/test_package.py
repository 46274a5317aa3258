"""The package itself: import without torch, the stub names what the module has, docstrings."""
import ast
import os
import subprocess
import sys

import denote


def test_import_does_not_import_torch():
    code = "import sys, denote; denote.Model; print('torch' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_from_torch_is_lazy():
    code = "import sys, denote; assert callable(denote.from_torch); print('denote.torch_capture' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_stub_matches_module():
    stub = os.path.join(os.path.dirname(denote.__file__), "_denote.pyi")
    tree = ast.parse(open(stub).read())
    top = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    import denote._denote as ext
    public = {k for k in dir(ext) if not k.startswith("_")}
    assert public <= top, public - top
    for cls in ("Model", "GraphBuilder"):
        node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
        stubbed = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        have = {k for k in dir(getattr(ext, cls)) if not k.startswith("_")}
        assert have <= stubbed, have - stubbed


def test_docstrings():
    for f in (denote.load, denote.loads, denote.verify, denote.Model.run, denote.Model.bounds, denote.Model.grad,
              denote.Model.plan, denote.GraphBuilder.op):
        assert f.__doc__ and len(f.__doc__) > 40
    assert os.path.exists(os.path.join(os.path.dirname(denote.__file__), "py.typed"))


def test_tune_allocator_is_opt_in_and_reports():
    # A fresh process: import alone leaves malloc alone; the call reports whether glibc took it.
    code = "import denote; print(denote.tune_allocator())"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() in ("True", "False")
    import platform
    if platform.libc_ver()[0] == "glibc" and "ASAN_OPTIONS" not in os.environ:
        assert r.stdout.strip() == "True"
