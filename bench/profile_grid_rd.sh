#!/usr/bin/env bash
# Nsight Compute summary of the tuned grid-RD kernels (GPU machine, .gpu carried): one launch each of the
# one-step 2D strip, the 4-step 2D tile and the 3D march, on the benchmark's grids.
set -uo pipefail
source .gpu/env.sh
OUT=${OUT:-/tmp/out}
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for kernel in rd_strip_2d rd_tile_2d rd_march_3d; do
  "$ncu" --clock-control none --launch-skip 2 --launch-count 1 -k regex:$kernel \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    .gpu/build/bench/bench_grid_rd --backend cuda --steps 16 > "$OUT/ncu_$kernel.txt" 2>&1
  echo "== $kernel"
  grep -E "DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Warp Cycles Per Issued|L2 Hit|Duration|Stall [A-Z][a-z]+ .*[0-9]" "$OUT/ncu_$kernel.txt" | head -12
done
