#!/usr/bin/env python3
"""A scenario-written gene network's cost grows with its size, not with its square (issue "Hostile input",
item 13: 5000 species on 16 cells once took 4 GB, each rate's parser binding every name of the network).
Networks of 500 and 5000 species (each rate reads its own species, the next one and one neighbour mean) run 3
steps on 16 cells; the peak resident memory above that of a 50-species run must grow at most linearly (10x
the species: at most 15x the memory, plus 8 MB) and stay under 128 MB above it (without AddressSanitizer), and `tissue check` of the 5000-species
network must take under 20 s.

usage: network_size.py TISSUE_BINARY WORK_DIR
"""
import os
import subprocess
import sys
import time

tissue, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
# AddressSanitizer's redzones and quarantine (up to 256 MB of freed blocks) add to the resident memory in
# proportion to what is allocated: only the linear growth is checked under it, not the absolute bound
sanitized = "libasan" in subprocess.run(["ldd", tissue], capture_output=True, text=True).stdout


def scenario(species):
    lines = ['[simulation]', 'entities = ["tissue"]', 'modules = ["sem", "cell_centres", "gene_network"]',
             'dt = 0.01', 'steps = 3', 'seed = 1', '[domain]', 'periodic = true', '[initial]',
             'layout = "monolayer"', 'cells_x = 4', 'cells_y = 4', 'elements_per_cell = 20',
             'adhesive_elements = 10', 'spacing = 0.6', 'cell_radius = 0.3', '[gene_network]',
             'neighbour_distance = 0.8']
    for i in range(species):
        lines += ['[[gene_network.species]]', f'name = "x{i}"',
                  f'rate = "0.1 - 0.01 * x{i} + 0.001 * x{(i + 1) % species} + 0.0001 * mean_x0"']
    path = os.path.join(work, f"network_{species}.toml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def peak_rss(species):
    path = scenario(species)
    p = subprocess.Popen([tissue, "run", path, "--every", "0", "--overwrite", "--backend", "cpu",
                          "--out", os.path.join(work, f"out_{species}")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"FAIL: {species} species: tissue run failed: {p.stderr.read().decode().strip()}")
    return usage.ru_maxrss * 1024


base = peak_rss(50)
small, large = peak_rss(500) - base, peak_rss(5000) - base
print(f"peak RSS above 50 species: 500 species {small / 1e6:.1f} MB, 5000 species {large / 1e6:.1f} MB")
failures = []
if large > 15 * max(small, 0) + 8e6:
    failures.append(f"5000 species take {large / 1e6:.1f} MB, more than 15 x the {small / 1e6:.1f} MB of 500")
if large > 128e6 and not sanitized:
    failures.append(f"5000 species take {large / 1e6:.1f} MB more than 50")
start = time.monotonic()
subprocess.run([tissue, "check", scenario(5000)], stdout=subprocess.DEVNULL, check=True)
took = time.monotonic() - start
print(f"tissue check of 5000 species: {took:.2f} s")
if took > 20:
    failures.append(f"tissue check of 5000 species took {took:.1f} s")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
