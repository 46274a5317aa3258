#!/usr/bin/env bash
# alpha-beta-CROWN (../shared/peers/alpha-beta-CROWN, run on the CPU with one thread) and denote one after
# the other on the same VNN-COMP 2021 instances: docs/PERF.md "Relu branch and bound" (its
# alpha-beta-CROWN row). alpha-beta-CROWN runs its vnncomp21 config for the benchmark, with what this
# machine lacks turned off: mnistfc's `bab-refine` needs Gurobi (-> `bab`, and `enable_opt_interm_bounds`
# off, which plain `bab` refuses), oval21's cutting planes need CPLEX (-> off). Needs python3-torch and the
# packages ../shared/peers/README.md lists (scripts/deps.sh --extra installs torch).
# Usage: bench/abcrown_cpu.sh [TIMEOUT_S] [--denote PATH]
#   Instances: the six of PERF's row (mnistfc 256x2 prop_1_0.03 / prop_3_0.03, oval21 cifar_base img6638 /
#   img4631, cifar_deep img5168, cifar_wide img19). Prints each tool's answer, CPU and wall seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
timeout_s=${1:-120}
denote=build/bin/denote
if [[ "${2:-}" == "--denote" ]]; then denote=$3; fi
peer=${DENOTE_PEERS:-../shared/peers}/alpha-beta-CROWN
data=${DENOTE_DATA:-../shared/data}/vnncomp2021
out=${DENOTE_BENCH_OUT:-/tmp/denote_abcrown}
mkdir -p "$out"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

# The configs, with the Gurobi / CPLEX parts off and the CSV paths dropped.
/usr/bin/python3 - "$peer/complete_verifier/exp_configs/vnncomp21" "$out" <<'EOF'
import sys, yaml
src, out = sys.argv[1], sys.argv[2]
m = yaml.safe_load(open(f"{src}/mnistfc.yaml"))
m["general"]["complete_verifier"] = "bab"
m["solver"]["beta-crown"]["enable_opt_interm_bounds"] = False
o = yaml.safe_load(open(f"{src}/oval21.yaml"))
o["bab"]["cut"]["enabled"] = False
o["bab"]["cut"]["cplex_cuts"] = False
for c in (m, o):
    c["general"].pop("root_path", None)
    c["general"].pop("csv_name", None)
yaml.safe_dump(m, open(f"{out}/mnistfc.yaml", "w"))
yaml.safe_dump(o, open(f"{out}/oval21.yaml", "w"))
EOF

one() {  # config net prop tag
  echo "== $4 (load $(cut -d' ' -f1-3 /proc/loadavg))"
  /usr/bin/time -f "   alpha-beta-CROWN: %U s user + %S s system, %e s wall" timeout $((timeout_s + 60)) \
    /usr/bin/python3 "$peer/run.py" --config "$out/$1" --device cpu --onnx_path "$2" --vnnlib_path "$3" \
    --results_file "$out/$4.txt" --timeout "$timeout_s" > "$out/$4.log" 2>&1 || true
  echo "   alpha-beta-CROWN: $(head -1 "$out/$4.txt" 2>/dev/null || echo 'no result (see the log)')"
  /usr/bin/time -f "   denote: %U s user + %S s system, %e s wall" \
    "$denote" verify "$2" "$3" --timeout "$timeout_s" --threads 1 --json > "$out/$4.json" || true
  /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('   denote:', d['result'], \
'%.2f s,' % d['time_s'], d['stats']['domains'], 'subdomains')" "$out/$4.json"
}

o=$data/oval21
one mnistfc.yaml "$data/mnistfc/mnist-net_256x2.onnx" "$data/mnistfc/prop_1_0.03.vnnlib" mnistfc_prop_1_0.03
one mnistfc.yaml "$data/mnistfc/mnist-net_256x2.onnx" "$data/mnistfc/prop_3_0.03.vnnlib" mnistfc_prop_3_0.03
one oval21.yaml "$o/nets/cifar_base_kw.onnx" "$o/vnnlib/cifar_base_kw-img6638-eps0.02065359477124183.vnnlib" base_img6638
one oval21.yaml "$o/nets/cifar_deep_kw.onnx" "$o/vnnlib/cifar_deep_kw-img5168-eps0.016209150326797386.vnnlib" deep_img5168
one oval21.yaml "$o/nets/cifar_base_kw.onnx" "$o/vnnlib/cifar_base_kw-img4631-eps0.016339869281045753.vnnlib" base_img4631
one oval21.yaml "$o/nets/cifar_wide_kw.onnx" "$o/vnnlib/cifar_wide_kw-img19-eps0.007973856209150327.vnnlib" wide_img19
