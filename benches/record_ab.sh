#!/usr/bin/env bash
# Two builds of `perftop record` side by side, at once, so the load is the same for both, at a
# 1 s interval; RUNS runs, the order they start in swapped each run.
#
#   PERFTOP_BIN=NEW PERFTOP_BASE=BASE benches/record_ab.sh [RUNS] [SAMPLES]    (default 4, 60)
#
# Prints each recorder's summary line per run: bytes and CPU a sample, and after its start-up
# (process CPU clock, not 10 ms ticks), and its peak RSS. Compare base and new within one run
# only: the same binary alone moves by a third on this VM from one hour to the next.
set -euo pipefail

RUNS=${1:-4}
N=${2:-60}
# shellcheck source=benches/two_builds.sh
source "$(dirname "$0")/two_builds.sh"

for run in $(seq "$RUNS"); do
    order=(base new)
    if ((run % 2 == 0)); then
        order=(new base)
    fi
    pids=()
    for which in "${order[@]}"; do
        bin=$BASE
        [ "$which" = new ] && bin=$NEW
        "$bin" record -d 1 -n "$N" -o "$TMP/$which-$run.ptrec" 2>"$TMP/$which-$run.log" &
        pids+=($!)
    done
    wait "${pids[@]}"
    echo "# run $run of $RUNS ($N samples, ${order[0]} started first), $(date -u '+%H:%M UTC'), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    for which in base new; do
        echo "$which: $(tail -n 1 "$TMP/$which-$run.log")"
    done
done
