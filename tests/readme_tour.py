#!/usr/bin/env python3
"""Runs the README's CLI tour (the ```sh block under "## A tour of the CLI") against the built CLI.

Each line runs with bash -o pipefail from the source root, `build/bin/denote` replaced by the CLI
under test and /tmp/ex by a fresh temporary directory. The expected exit code is 0, or N when the
line's comment says "exit N" right after the '#' (e.g. "# exit 1: ..."). A line piping to `dot` is
skipped when graphviz is not installed (scripts/deps.sh installs it).

Usage: readme_tour.py CLI SOURCE_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def tour_lines(readme):
    text = open(readme, encoding="utf-8").read()
    start = text.index("## A tour of the CLI")
    block = text[text.index("```sh\n", start) + len("```sh\n"):]
    block = block[:block.index("```")]
    return [line for line in block.splitlines() if line.strip()]


def expected_code(line):
    m = re.search(r"#\s*exit (\d+)", line)
    return int(m.group(1)) if m else 0


def main():
    cli, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    lines = tour_lines(os.path.join(source, "README.md"))
    if len(lines) < 10:
        print(f"readme_tour: only {len(lines)} tour lines found in README.md")
        return 1
    failures = 0
    with tempfile.TemporaryDirectory(prefix="denote_tour_") as tmp:
        for line in lines:
            cmd = line.replace("build/bin/denote", cli).replace("/tmp/ex", tmp)
            if re.search(r"\|\s*dot\b", line) and shutil.which("dot") is None:
                print(f"SKIP (no graphviz `dot`): {line}")
                continue
            want = expected_code(line)
            r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=source, capture_output=True, text=True,
                               timeout=300)
            ok = r.returncode == want and "terminate called" not in r.stderr
            print(f"{'ok  ' if ok else 'FAIL'} exit {r.returncode} (want {want}): {line}")
            if not ok:
                failures += 1
                print("  stderr: " + r.stderr.strip()[-2000:])
    print(f"readme_tour: {len(lines)} lines, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
