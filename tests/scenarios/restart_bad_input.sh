#!/usr/bin/env bash
# usage: restart_bad_input.sh TISSUE CHECKPOINT FAILED_CHECKPOINT OTHER_SCENARIO WORK_DIR
# `tissue run --restart` with bad checkpoints: each must exit with code 2 and a one-line message naming the
# problem, and none may create its --out directory.
set -u
tissue=$1; good=$2; failed=$3; other=$4; work=$5
here=$(dirname "$0")
rm -rf "$work"; mkdir -p "$work/empty"
head -c 3000 "$good" > "$work/truncated.h5"
echo "not a checkpoint" > "$work/text.h5"
status=0
expect() {  # expect REGEX ARGS...
  local regex=$1; shift
  "$here/expect_failure.sh" 2 "$regex" "$tissue" run "$@" --out "$work/never" || status=1
  if [ -e "$work/never" ]; then echo "created the output directory: $*"; status=1; fi
}
expect "truncated.h5: cannot open \(truncated or damaged file\?\): truncated file" --restart "$work/truncated.h5"
expect "text.h5: not an HDF5 file" --restart "$work/text.h5"
expect "missing.h5: no such file" --restart "$work/missing.h5"
expect "empty: no checkpoint_<step>.h5 in this directory" --restart "$work/empty"
expect "was written by a run of another scenario" "$other" --restart "$good"
expect "holds the last state of a failed run \(step [0-9]+: " --restart "$failed"
expect "the run ends at step 1: nothing to do" --restart "$good" --steps 1
exit $status
