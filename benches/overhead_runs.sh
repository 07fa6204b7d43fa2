#!/usr/bin/env bash
# The idle ratio to htop as a median of RUNS runs of benches/overhead.sh, not one: one build's
# ratio moved 0.46-0.64x between 60 s runs a minute apart (docs/performance.md, "Where the idle
# dashboard's time goes, and how far the idle ratio moves"), more than the changes it is asked
# to judge. With PERFTOP_BASE set, the two builds run side by side in every run, as in
# overhead.sh, and each gets its median.
#
#   benches/overhead_runs.sh [RUNS] [SECONDS]        (default 5 runs of 60 s)
#
# Prints each run's table row for perftop (and perftop-base) and htop, then the ratios and their
# medians. Environment: as overhead.sh (PERFTOP_BIN, PERFTOP_BASE).
set -euo pipefail

RUNS=${1:-5}
DUR=${2:-60}
cd "$(dirname "$0")/.."
OUT=$(mktemp)
trap 'rm -f "$OUT" "$OUT.ratios"' EXIT
for ((i = 1; i <= RUNS; i++)); do
    bash benches/overhead.sh "$DUR" >"$OUT"
    grep -E '^# 2' "$OUT"
    grep -E '^\| (perftop|perftop-base|htop) \|' "$OUT"
    # The "x htop" column of each perftop row, kept as "name ratio" lines; a row without one
    # (the tool exited early, or no htop) counts in no median.
    awk -F'|' '$2 ~ /^ perftop(-base)? $/ { gsub(/ /, "", $2); gsub(/ /, "", $6); if ($6 != "") print $2, $6 }' "$OUT" >>"$OUT.ratios"
done
echo
for name in perftop perftop-base; do
    awk -v n="$name" '$1 == n { print $2 }' "$OUT.ratios" | sort -n | awk -v n="$name" '
        { v[NR] = $1; all = all (NR > 1 ? ", " : "") $1 }
        END {
            if (NR == 0) exit
            m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%s x htop over %d runs (sorted): %s; median %.2f\n", n, NR, all, m
        }'
done
