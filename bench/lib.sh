# shellcheck shell=bash
# The helpers bench/run-* share (source it: `source "$(dirname "$0")/lib.sh"`), so that
# every script reads JSON, takes the best of its repeats and prints a ratio the same way.
# Tested by tests/bench_lib_test.sh (CTest `bench.lib`).

# The value of field $2 in the JSON text $1: the first match, quoted or not, with or without
# a space after the colon; nothing when absent.
json_field() {
  sed -n "s/.*\"$2\": *\"\{0,1\}\([-0-9.eE+a-zA-Z_:]*\).*/\1/p" <<< "$1" | head -n 1
}

# a/b with $3 decimals (2 by default), or - when either is missing or not above zero.
ratio() {
  awk -v a="${1:-0}" -v b="${2:-0}" -v d="${3:-2}" \
    'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.*f", d, a / b; else print "-" }'
}

# The larger of two numbers (compared as numbers; a missing one counts as 0).
max() {
  awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { print (a + 0 > b + 0 ? a : b) }'
}

# Whether VALUE ($1) meets a goal OP ($2: >= or <=) TARGET ($3): met, NOT met, or n/a when
# the value is missing (a failed run's - or nothing).
goal_verdict() {
  awk -v v="${1:-}" -v op="$2" -v t="$3" 'BEGIN {
    if (v == "-" || v == "") print "n/a"
    else if ((op == ">=" && v + 0 >= t + 0) || (op == "<=" && v + 0 <= t + 0)) print "met"
    else print "NOT met" }'
}

# samples_per_s of a `ranklab run ... --json` output $1 (its summary object), or nothing.
run_rate() {
  json_field "$1" samples_per_s
}
