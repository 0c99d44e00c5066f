#!/usr/bin/env bash
# Nsight Compute summary of the tuned grid-RD kernels (GPU machine, .gpu carried): one launch each of the
# one-step 2D shared-memory tile, the temporal-blocking 2D tile and the 3D column kernel, on the
# benchmark's grids. Full reports go to $OUT/ncu_<kernel>.txt.
set -uo pipefail
source .gpu/env.sh
OUT=${OUT:-/tmp/out}
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
# launches to skip: warm-ups (the 2-step temporal case runs before the 4-step one that is profiled)
declare -A skip=([rd_tile1_2d]=2 [rd_tile_2d]=12 [rd_rows_3d]=2)
for kernel in rd_tile1_2d rd_tile_2d rd_rows_3d; do
  "$ncu" --clock-control none --launch-skip "${skip[$kernel]}" --launch-count 1 -k regex:"$kernel" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --section Occupancy --section WarpStateStats --section LaunchStats --metrics dram__bytes_read.sum,dram__bytes_write.sum \
    .gpu/build/bench/bench_grid_rd --backend cuda --steps 16 > "$OUT/ncu_$kernel.txt" 2>&1
  echo "== $kernel"
  grep -E "DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|L2 Hit|L1/TEX Hit|Duration|Registers Per|Block Limit|Stall [A-Z][a-z]+ .*[0-9]|dram__bytes" "$OUT/ncu_$kernel.txt" | head -20
done
