#!/usr/bin/env python3
"""The memory estimate a scenario is admitted with (Composition::reserve_memory, run.json "memory") against
what a run really takes, at two sizes of each model whose memory grows with its input (a grid, the epidermis
with and without its gene network, elements per cell 20 and 10):

- the engine's device buffers at their peak (run.json memory.device_peak_bytes, the allocation counters;
  1 MB for small buffers the estimates leave out)
  are at most the device estimate, and the estimate at most 1.5 times them;
- on the CPU backend, the process's peak resident memory above that of a tiny run (os.wait4's ru_maxrss)
  is at most the host + device estimate, and, for a build without CUDA, the estimate at most 1.6 times it
  (plus 16 MB): a CUDA build's tiny run already peaks at hundreds of MB while it loads its kernels, pages
  that the model's arrays then reuse, so the RSS above it understates what the model takes (not checked
  at all in a build with AddressSanitizer, whose shadow memory and quarantine are no part of the estimate);
- `tissue check` under a memory limit (TISSUE_MEMORY_LIMIT) just below the estimate refuses the scenario
  with exit code 2 and the numbers, and one just above accepts it.

usage: memory_estimate.py TISSUE_BINARY SCENARIO_DIR WORK_DIR [--backend cpu|cuda]
"""
import json
import os
import re
import shutil
import subprocess
import sys

tissue, scenarios, work = sys.argv[1], sys.argv[2], sys.argv[3]
backend = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--backend" else "cpu"
os.makedirs(work, exist_ok=True)
failures = []
sanitized = "libasan" in subprocess.run(["ldd", tissue], capture_output=True, text=True).stdout

grid = open(os.path.join(scenarios, "gray_scott_theta.toml")).read()
epidermis = open(os.path.join(scenarios, "epidermis.toml")).read()


def grid_of(n):
    return grid.replace("nx = 512", f"nx = {n}").replace("ny = 512", f"ny = {n}")


def epidermis_of(n, elements=20, network=True):
    text = epidermis.replace("cells_x = 10", f"cells_x = {n}").replace("cells_y = 10", f"cells_y = {n}")
    if elements != 20:
        text = (text.replace("elements_per_cell = 20", f"elements_per_cell = {elements}")
                .replace("adhesive_elements = 10", f"adhesive_elements = {elements // 2}")
                .replace("division_elements = 40", f"division_elements = {2 * elements}"))
    if not network:
        text = text.replace('"gene_network", "lifecycle", "stratification"', "")
        text = re.sub(r"\[gene_network\][^\[]*", "", text)
        text = re.sub(r"\[lifecycle\][^\[]*", "", text)
    return text


def run(name, text):
    """Runs 3 steps with a snapshot at each end; returns (peak RSS [bytes], run.json's memory)."""
    path = os.path.join(work, name + ".toml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(work, "out_" + name)
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.Popen([tissue, "run", path, "--steps", "3", "--every", "3", "--out", out, "--backend", backend],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    err = p.stderr.read().decode()
    if status != 0:
        failures.append(f"{name}: tissue run failed: {err.strip()}")
        return 0, {}
    with open(os.path.join(out, "run.json")) as f:
        record = json.load(f)
    memory = record["memory"]
    memory["cuda_build"] = "cuda" in record["engine"]["backends"]
    return usage.ru_maxrss * 1024, memory


def check_limit(name, limit):
    path = os.path.join(work, name + ".toml")
    env = dict(os.environ, TISSUE_MEMORY_LIMIT=str(int(limit)))
    p = subprocess.run([tissue, "check", path], env=env, capture_output=True, text=True)
    return p.returncode, p.stderr.strip()


baseline, _ = run("tiny", grid_of(8))
mb = 1e6
cases = [("grid_1000", grid_of(1000)), ("grid_2000", grid_of(2000)),
         ("epidermis_100", epidermis_of(100)), ("epidermis_200", epidermis_of(200)),
         ("epidermis_200_10_elements", epidermis_of(200, elements=10)),
         ("epidermis_200_no_network", epidermis_of(200, network=False))]
print(f"{'case':28} {'device peak':>12} {'device est.':>12} {'RSS above tiny':>15} {'total est.':>11}  (MB)")
for name, text in cases:
    rss, memory = run(name, text)
    if not memory:
        continue
    peak, est_device, est_host = (memory["device_peak_bytes"], memory["estimate_device_bytes"],
                                  memory["estimate_host_bytes"])
    used = rss - baseline
    total = est_host + est_device
    print(f"{name:28} {peak / mb:12.1f} {est_device / mb:12.1f} {used / mb:15.1f} {total / mb:11.1f}")
    if not (peak <= est_device + 1e6 and est_device <= 1.5 * peak + 1e6):
        failures.append(f"{name}: device estimate {est_device / mb:.1f} MB against a peak of {peak / mb:.1f} MB")
    tight = not memory["cuda_build"]
    if backend == "cpu" and not sanitized and not (used <= total and (not tight or total <= 1.6 * used + 16e6)):
        failures.append(f"{name}: host + device estimate {total / mb:.1f} MB against {used / mb:.1f} MB used")
    if backend == "cpu":
        code, err = check_limit(name, 0.9 * total)
        if code != 2 or "need about" not in err or "available on the cpu backend" not in err:
            failures.append(f"{name}: a limit of 0.9 x the estimate gave exit {code}: {err}")
        code, err = check_limit(name, 1.1 * total + 1e6)
        if code != 0:
            failures.append(f"{name}: a limit of 1.1 x the estimate gave exit {code}: {err}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
