#!/usr/bin/env bash
# bench/lib.sh, the helpers every bench/run-* script shares: JSON fields as the benchmarks
# print them (compact lines, `ranklab run --json`'s indented summary), ratios and maxima,
# including the missing values a failed run leaves.
set -u
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/../../bench/lib.sh"
failures=0
expect() {  # expect WHAT GOT WANT
  if [[ "$2" != "$3" ]]; then
    echo "FAIL: $1: got '$2', want '$3'"
    ((++failures))
  fi
}

compact='{"model":"mlp","batch":64,"samples_per_s":114621.5,"library":"oneDNN"}'
indented=$'run 3 started: mpirun ...\n{\n  "id": 3,\n  "samples_per_s": 2.5e+05,\n  "ranks": [{"samples_per_s": 1}]\n}'
expect "a number, compact" "$(json_field "$compact" samples_per_s)" 114621.5
expect "a string, compact" "$(json_field "$compact" library)" oneDNN
expect "the first of two, indented, after other output" "$(run_rate "$indented")" 2.5e+05
expect "an id, indented" "$(json_field "$indented" id)" 3
expect "a field that is absent" "$(json_field "$compact" gflops)" ""
expect "ratio, 2 decimals" "$(ratio 3 2)" 1.50
expect "ratio, 3 decimals" "$(ratio 1 3 3)" 0.333
expect "ratio of a failed run" "$(ratio "" 2)" -
expect "ratio over zero" "$(ratio 2 0)" -
expect "max, as numbers" "$(max 9.5 10)" 10
expect "max, exponent" "$(max 2.5e+05 240000)" 2.5e+05
expect "max with a failed run" "$(max "" 7)" 7
expect "a goal met" "$(goal_verdict 1.31 ">=" 1.3)" met
expect "a goal met exactly" "$(goal_verdict 1.0 ">=" 1.0)" met
expect "a goal missed, as numbers" "$(goal_verdict 9.5 ">=" 10)" "NOT met"
expect "an upper goal met" "$(goal_verdict 0.8 "<=" 1.05)" met
expect "an upper goal missed" "$(goal_verdict 1.2 "<=" 1.05)" "NOT met"
expect "a goal of a failed run" "$(goal_verdict - ">=" 1.3)" n/a
expect "a goal of nothing" "$(goal_verdict "" ">=" 1.3)" n/a
((failures == 0)) && echo "bench/lib.sh: all checks passed"
exit $((failures > 0))
