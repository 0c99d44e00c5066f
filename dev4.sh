#!/usr/bin/env bash
OUT=$OUT bash bench/gpu_session.sh tests conformal > $OUT/session.txt 2>&1
grep -E "tests passed|summary|rc=" -A0 $OUT/session.txt | tail -5
grep -E "similarity_xform cg|spin_positions cg|full iteration, cg" $OUT/bench_conformal.txt
head -12 $OUT/bench_conformal_trace.txt | tail -7
grep -E "Failed|\*\*\*" $OUT/ctest.log | head
