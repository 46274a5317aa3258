"""The README's Python examples run as written (from the repository root)."""
import os
import re
import subprocess
import sys


def python_blocks(root):
    text = open(os.path.join(root, "README.md")).read()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S), re.findall(r"```sh\n(.*?)```", section, re.S)


def test_readme_python_examples(root):
    blocks, _ = python_blocks(root)
    assert blocks
    for code in blocks:
        r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                           env=dict(os.environ))
        assert r.returncode == 0, r.stderr
        assert "EvalError 0 input" in r.stdout


def test_readme_import_line(root):
    _, sh = python_blocks(root)
    line = [l for l in sh[0].splitlines() if "import denote" in l][0]
    code = re.search(r'-c "(.*)"', line).group(1)
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
