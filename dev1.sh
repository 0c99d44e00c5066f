#!/usr/bin/env bash
OUT=$OUT bash bench/gpu_session.sh tests conformal > $OUT/session.txt 2>&1
tail -40 $OUT/session.txt
src=$(cat .gpu/source_dir); source .gpu/env.sh
b=.gpu/build/bench/bench_conformal_willmore
timeout 300 /usr/local/cuda/bin/ncu --metrics gpu__time_duration.sum --kernel-name-base demangled -k regex:'Amg|Cg' --launch-skip 4000 --launch-count 52 --csv --page raw $b --backend cuda --solver cg --trace-steps 2 --tau 0.05 --mesh scenarios/meshes/stanford-bunny.obj > $OUT/ncu.csv 2>$OUT/ncu.err
python3 - <<'PY'
import csv,os,re
rows=list(csv.reader(open(os.environ['OUT']+'/ncu.csv')))
h=None
for r in rows:
    if 'Kernel Name' in r: h=r; continue
    if h and len(r)==len(h):
        d=dict(zip(h,r)); n=d['Kernel Name']; m=re.search(r'(Cg\w+|Amg\w+)<?[^,>]*',n)
        print(f"{d.get('gpu__time_duration.sum','?'):>10} {m.group(0)[:60] if m else n[:60]}")
PY
