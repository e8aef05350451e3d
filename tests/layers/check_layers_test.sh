#!/usr/bin/env bash
# tools/check_layers.py passes on this tree and fails, naming the file, on a tree with an
# upward include or an include cycle planted in it.
set -euo pipefail
check=$1/tools/check_layers.py
python3 "$check"

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/kernels" "$tree/comm" "$tree/engine"
printf '#include "comm/a.h"\n' >"$tree/kernels/k.h"  # a lower layer including a higher one
printf '#include "comm/b.h"\n' >"$tree/comm/a.h"      # a.h -> b.h -> a.h
printf '#include "comm/a.h"\n' >"$tree/comm/b.h"
printf '#include "comm/a.h"\n' >"$tree/engine/ok.h"  # down the layers: allowed
if out=$(python3 "$check" --root "$tree"); then
  echo "check_layers passed a tree with planted problems:"; echo "$out"; exit 1
fi
grep -q 'kernels/k.h:1: includes comm/a.h: kernels may not include comm' <<<"$out"
grep -q 'include cycle: comm/a -> comm/b -> comm/a' <<<"$out"
if grep -q 'engine/ok.h' <<<"$out"; then echo "flagged an allowed include: $out"; exit 1; fi
echo "check_layers: planted problems found"
