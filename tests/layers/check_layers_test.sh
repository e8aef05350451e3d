#!/usr/bin/env bash
# tools/check_layers.py passes on this tree and fails, naming the file, on a tree with an
# upward include, an include up the sub-folders of a layer, a system library outside its
# home, or an include cycle planted in it.
set -euo pipefail
check=$1/tools/check_layers.py
python3 "$check"

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/kernels" "$tree/comm/collectives" "$tree/comm/codecs" "$tree/comm/mpi" "$tree/engine/job"
printf '#include "comm/a.h"\n' >"$tree/kernels/k.h"  # a lower layer including a higher one
printf '#include "comm/b.h"\n' >"$tree/comm/a.h"      # a.h -> b.h -> a.h
printf '#include "comm/a.h"\n' >"$tree/comm/b.h"
printf '#include "comm/a.h"\n' >"$tree/engine/ok.h"  # down the layers: allowed
printf '#include "comm/codecs/c.h"\n' >"$tree/comm/collectives/r.h"  # up inside comm
printf '#include "comm/collectives/r2.h"\n' >"$tree/comm/codecs/ok.h" # down inside comm: allowed
printf '#include <mpi.h>\n#include <QObject>\n' >"$tree/engine/job/j.cpp"  # libraries out of place
printf '#include <mpi.h>\n' >"$tree/comm/mpi/ok.h"                    # MPI at home: allowed
if out=$(python3 "$check" --root "$tree"); then
  echo "check_layers passed a tree with planted problems:"; echo "$out"; exit 1
fi
grep -q 'kernels/k.h:1: includes comm/a.h: kernels may not include comm' <<<"$out"
grep -q 'include cycle: comm/a -> comm/b -> comm/a' <<<"$out"
grep -q 'comm/collectives/r.h:1: includes comm/codecs/c.h: comm/collectives may not include comm/codecs' <<<"$out"
grep -q 'engine/job/j.cpp:1: includes <mpi.h>: MPI belongs in comm/mpi/ alone' <<<"$out"
grep -q 'engine/job/j.cpp:2: includes <QObject>: Qt belongs in views/ and app/ alone' <<<"$out"
if grep -qE 'engine/ok.h|comm/codecs/ok.h|comm/mpi/ok.h' <<<"$out"; then echo "flagged an allowed include: $out"; exit 1; fi
echo "check_layers: planted problems found"
