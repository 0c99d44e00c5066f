#!/usr/bin/env python3
"""Checks the run.json of a finished run against independent evaluations.

usage: check_run_json.py RUN_DIR SCENARIO STATUS EXIT_CODE STEPS_REQUESTED STEPS_DONE

The scenario's SHA-256 is recomputed with hashlib, the times are parsed as ISO 8601 UTC, and the status,
exit code and step counts must be the expected ones (a failed run also needs a message).
"""
import datetime
import hashlib
import json
import os
import sys


def main():
    run_dir, scenario, status = sys.argv[1], sys.argv[2], sys.argv[3]
    exit_code, requested, done = (int(v) for v in sys.argv[4:7])
    with open(os.path.join(run_dir, "run.json")) as f:
        record = json.load(f)
    with open(scenario, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    problems = []

    def expect(what, got, want):
        if got != want:
            problems.append(f"{what}: got {got!r}, expected {want!r}")

    expect("status", record["status"], status)
    expect("exit_code", record["exit_code"], exit_code)
    if status == "failed" and f"step {done}:" not in record.get("message", ""):
        problems.append(f"a failed run's message should name step {done}: {record.get('message')!r}")
    expect("scenario.sha256", record["scenario"]["sha256"], digest)
    expect("scenario.path", os.path.realpath(record["scenario"]["path"]), os.path.realpath(scenario))
    expect("steps", record["steps"], {"start": record["steps"]["start"], "requested": requested, "done": done})
    for key in ("model", "backend", "device", "host", "command", "engine"):
        if not record.get(key):
            problems.append(f"{key} is empty")
    started = datetime.datetime.strptime(record["started"], "%Y-%m-%dT%H:%M:%SZ")
    ended = datetime.datetime.strptime(record["ended"], "%Y-%m-%dT%H:%M:%SZ")
    if ended < started:
        problems.append(f"ended {ended} before started {started}")
    if not record["wall_seconds"] >= 0:
        problems.append(f"wall_seconds {record['wall_seconds']}")
    if problems:
        print("run.json: " + "; ".join(problems))
        return 1
    print(f"run.json ok: {status} on {record['backend']} ({record['device']}), {record['wall_seconds']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
