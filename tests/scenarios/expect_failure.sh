#!/usr/bin/env bash
# usage: expect_failure.sh EXPECTED_EXIT_CODE REGEX COMMAND...
# Passes when COMMAND exits with EXPECTED_EXIT_CODE, its stderr matches REGEX (grep -E) in one line,
# and it wrote nothing to the output directory given with --out (if any).
set -u
expected=$1; regex=$2; shift 2
err=$(mktemp)
"$@" >/dev/null 2>"$err"
rc=$?
msg=$(cat "$err"); rm -f "$err"
if [ "$rc" -ne "$expected" ]; then echo "exit code $rc, expected $expected; stderr: $msg"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$msg"; then echo "stderr does not match /$regex/: $msg"; exit 1; fi
if [ "$(wc -l <<<"$msg")" -ne 1 ]; then echo "expected a one-line message, got: $msg"; exit 1; fi
echo "ok: exit $rc: $msg"
