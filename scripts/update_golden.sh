#!/usr/bin/env bash
# Regenerates the golden files derived from the built CLI after an intended change:
# tests/golden/demo.txt (the demo transcript), docs/OPS.md (the op table), and the seed extract.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build --preset release --target denote_cli >/dev/null
build/bin/denote demo > tests/golden/demo.txt
build/bin/denote ops --markdown > docs/OPS.md
if [[ -f ../shared/seeds/000_51c49c3d0318e945.txt ]]; then
  python3 tests/golden/extract_seed_golden.py > tests/golden/seed_demo_expected.txt
fi
echo "updated tests/golden/demo.txt, docs/OPS.md, tests/golden/seed_demo_expected.txt"
