#!/usr/bin/env bash
OUT=$OUT bash bench/gpu_session.sh tests conformal > $OUT/session.txt 2>&1
grep -E "tests passed|summary|rc=" $OUT/session.txt | tail -4
grep -E "mean of|similarity_xform cg|spin_positions cg|full iteration, cg|cg iterations" $OUT/bench_conformal.txt
head -26 $OUT/bench_conformal_trace.txt | tail -21
grep -E "Failed|\*\*\*" $OUT/ctest.log | head
