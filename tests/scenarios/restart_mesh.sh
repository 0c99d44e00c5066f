#!/usr/bin/env bash
# A restart continues on the mesh its run started with (issue "Hostile input", item 6): for a surface RD run
# and a tissue on a [membrane] mesh, each from a copy of its scenario and mesh, a restart after the mesh file
# was edited (one coordinate), or after it was removed, must exit 2 with one line naming the file; once the
# file is restored, the restart runs and ends where an uninterrupted run ends, byte for byte.
#   usage: restart_mesh.sh TISSUE SCENARIO_DIR WORK_DIR
set -u
tissue=$1 scenarios=$2 work=$3
expect=$(dirname "$0")/expect_failure.sh
rm -rf "$work" && mkdir -p "$work"
failed=0
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}
for name in gray_scott_spot epidermis_spot; do
  dir=$work/$name
  mkdir -p "$dir/meshes"
  cp "$scenarios/$name.toml" "$dir/"
  cp "$scenarios/meshes/spot.obj" "$dir/meshes/"
  mesh=$dir/meshes/spot.obj
  "$tissue" run "$dir/$name.toml" --steps 10 --every 0 --out "$dir/run" > /dev/null 2>&1 || fail "$name: first run"
  "$tissue" run "$dir/$name.toml" --steps 20 --every 0 --out "$dir/whole" > /dev/null 2>&1 || fail "$name: whole run"
  cp "$mesh" "$dir/spot.orig"
  # one coordinate of the first vertex changed
  awk '!done && /^v / { $2 = $2 + 0.01; done = 1 } { print }' "$dir/spot.orig" > "$mesh"
  cmp -s "$mesh" "$dir/spot.orig" && fail "$name: the edit changed nothing"
  out=$("$expect" 2 "spot.obj changed \(SHA-256 [0-9a-f]{12}\.\.\. then, [0-9a-f]{12}\.\.\. now\)" \
        "$tissue" run --restart "$dir/run" --steps 20 --every 0) || fail "$name: edited mesh: $out"
  rm "$mesh"
  out=$("$expect" 2 "spot.obj" "$tissue" run --restart "$dir/run" --steps 20 --every 0) ||
    fail "$name: removed mesh: $out"
  cp "$dir/spot.orig" "$mesh"
  "$tissue" run --restart "$dir/run" --steps 20 --every 0 > /dev/null 2>&1 || fail "$name: restart on the restored mesh"
  for f in "$dir"/whole/*_000000020.vtu; do
    cmp -s "$f" "$dir/run/$(basename "$f")" || fail "$name: $(basename "$f") differs from the uninterrupted run"
  done
done
[ $failed -eq 0 ] && echo "restart on edited, removed and restored meshes: all as expected"
exit $((failed > 0))
