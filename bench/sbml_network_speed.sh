#!/usr/bin/env bash
# An SBML gene network against the same network written in the scenario (issue 37: "an SBML network runs
# at the speed of the same network written in the scenario"). The full epidermis (100 cells, 2000
# elements) runs to STEPS steps three ways, alternately, REPEATS times each, with no output but the last:
#   builtin  scenarios/epidermis.toml                 the network in C++ (for reference)
#   written  scenarios/epidermis_user_network.toml    the network written in the scenario (muParser/NVRTC)
#   sbml     examples/sbml/epidermis_sbml.toml        the same network read from SBML (muParser/NVRTC)
# and prints the median wall time and steps/s of each and sbml / written. The written and SBML networks
# are compiled by the same code (both are a UserNetworkSpec); the SBML import binds function definitions
# at their calls and keeps those that are the language's hill, hill_act and hill_rep as calls, as written.
#   usage: bench/sbml_network_speed.sh [BACKEND] [STEPS] [REPEATS] [TISSUE]
#   CPU:  bench/sbml_network_speed.sh cpu 200 3                          (build/cpu/tools/tissue)
#   GPU:  bench/sbml_network_speed.sh cuda 20000 3 build/cuda/tools/tissue
#         (or .gpu/build/tools/tissue on the GPU machine, after source .gpu/env.sh)
set -euo pipefail
backend=${1:-cpu} steps=${2:-200} repeats=${3:-3}
tissue=${4:-build/$backend/tools/tissue}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A scenario=([builtin]=scenarios/epidermis.toml [written]=scenarios/epidermis_user_network.toml
                     [sbml]=examples/sbml/epidermis_sbml.toml)
names=(builtin written sbml)
for ((r = 1; r <= repeats; ++r)); do
  for n in "${names[@]}"; do
    "$tissue" run "${scenario[$n]}" --backend "$backend" --steps "$steps" --every 0 --out "$work/$n" \
      --overwrite > "$work/$n.log" 2>&1 || { cat "$work/$n.log"; exit 1; }
    grep -oE 'wall time [0-9.]+' "$work/$n.log" | grep -oE '[0-9.]+$' >> "$work/$n.times"
  done
done
printf '%-8s %-8s %7s %12s %10s\n' network backend steps "median s" "steps/s"
for n in "${names[@]}"; do
  med=$(sort -g "$work/$n.times" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
  echo "$med" > "$work/$n.median"
  printf '%-8s %-8s %7d %12.3f %10.1f\n' "$n" "$backend" "$steps" "$med" "$(awk -v s="$steps" -v t="$med" 'BEGIN{print s/t}')"
done
awk -v a="$(cat "$work/sbml.median")" -v b="$(cat "$work/written.median")" \
  'BEGIN {printf "sbml / written wall time: %.3f (1 = the same speed)\n", a / b}'
