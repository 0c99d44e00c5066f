#!/usr/bin/env bash
# Whole classes of bad command-line values and scenario paths (issue "Hostile input", items 10 and 11): every
# integer flag with empty, negative, fractional, non-numeric and overflowing values; every string flag empty;
# scenario paths that are not regular files (a device, a FIFO) or too large. Each must exit 2 with one line
# naming the flag or the file, within a few seconds (a FIFO must not block).
#   usage: bad_flags.sh TISSUE SCENARIO WORK_DIR
set -u
tissue=$1 scenario=$2 work=$3
expect=$(dirname "$0")/expect_failure.sh
rm -rf "$work" && mkdir -p "$work"
failed=0 tried=0
try() {  # regex, arguments...
  local regex=$1
  shift
  tried=$((tried + 1))
  if ! out=$(timeout 20 "$expect" 2 "$regex" "$tissue" "$@"); then
    echo "FAIL: tissue $*: $out"
    failed=$((failed + 1))
  fi
}
for flag in --steps --every --checkpoint-every; do
  for value in "" -1 1.5 abc 1e3 99999999999999999999 9223372036854775808; do
    try "^tissue: error: .*$flag" run "$scenario" "$flag" "$value" --out "$work/never"
  done
done
try "^tissue: error: .*--out.*must not be empty" run "$scenario" --out ""
for flag in --backend --restart; do
  try "^tissue: error: .*$flag.*must not be empty" run "$scenario" "$flag" "" --out "$work/never"
done
try "/dev/zero: not a regular file" check /dev/zero
try "/dev/zero: not a regular file" run /dev/zero --out "$work/never"
mkfifo "$work/fifo"
try "fifo: not a regular file" check "$work/fifo"
head -c $((5 << 20)) /dev/zero | tr '\0' '#' > "$work/huge.toml"
try "huge.toml: 5242880 bytes, more than a scenario file may have" check "$work/huge.toml"
if [ -e "$work/never" ]; then echo "FAIL: a refused run wrote $work/never"; failed=$((failed + 1)); fi
echo "$tried cases, $failed failed"
[ "$failed" -eq 0 ]
