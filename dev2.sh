#!/usr/bin/env bash
src=$(cat .gpu/source_dir); mkdir -p $(dirname $src); ln -sfn $PWD $src; source .gpu/env.sh
grep -rl --null "__PACKED_BUILD__" .gpu/build | xargs -0 -r sed -i "s#__PACKED_BUILD__#$PWD/.gpu/build#g"
B=.gpu/build
$B/tests/test_engine_cuda "[exec],[linalg]" 2>&1 | tail -2
$B/tests/test_modules_cuda "[conformal_willmore]" 2>&1 | tail -2
b=$B/bench/bench_conformal_willmore
$b --backend cuda --repeats 3 --solver cg --tau 0.05 --mesh scenarios/meshes/stanford-bunny.obj 2>&1 | grep -E "similarity|spin|full"
$b --backend cuda --solver cg --trace-steps 6 --tau 0.05 --mesh scenarios/meshes/stanford-bunny.obj 2>&1 | tail -7
$b --backend cuda --solver cg --repeats 3 --mesh scenarios/meshes/spot.obj 2>&1 | grep -E "full"
timeout 300 /usr/local/cuda/bin/ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum --kernel-name-base demangled -k regex:'Amg|Cg|cooperative' --launch-skip 4000 --launch-count 12 --csv --page raw $b --backend cuda --solver cg --trace-steps 2 --tau 0.05 --mesh scenarios/meshes/stanford-bunny.obj > $OUT/ncu.csv 2>$OUT/ncu.err
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
