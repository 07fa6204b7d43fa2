#!/usr/bin/env bash
# Two builds of `perftop export` side by side, at once, so the load is the same for both: each
# as `export --textfile DIR` and as `export --listen ADDR`, at a 1 s interval, the two servers
# scraped once a second by one curl loop that asks for OpenMetrics (as Prometheus does).
#
#   PERFTOP_BIN=NEW PERFTOP_BASE=BASE benches/export_ab.sh [INTERVALS]    (default 120)
#
# Prints each exporter's summary line: CPU an interval, and after its start-up (process CPU
# clock, not 10 ms ticks), and its peak RSS. Compare base and new within one run only.
set -euo pipefail

N=${1:-120}
# shellcheck source=benches/two_builds.sh
source "$(dirname "$0")/two_builds.sh"

mkdir "$TMP/tf-base" "$TMP/tf-new"
"$BASE" export --textfile "$TMP/tf-base" -d 1 -n "$N" 2>"$TMP/textfile-base.log" &
pids+=($!)
"$NEW" export --textfile "$TMP/tf-new" -d 1 -n "$N" 2>"$TMP/textfile-new.log" &
pids+=($!)
"$BASE" export --listen 127.0.0.1:18501 -d 1 -n "$N" 2>"$TMP/listen-base.log" &
pids+=($!)
"$NEW" export --listen 127.0.0.1:18502 -d 1 -n "$N" 2>"$TMP/listen-new.log" &
pids+=($!)
exporters=("${pids[@]}")
sleep 1.5
(
    while :; do
        for port in 18501 18502; do
            curl -s -o /dev/null --max-time 2 \
                -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5' \
                "http://127.0.0.1:$port/metrics" || true
        done
        sleep 1
    done
) &
pids+=($!)
wait "${exporters[@]}"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $N intervals; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
for f in textfile-base textfile-new listen-base listen-new; do
    echo "$f: $(tail -n 1 "$TMP/$f.log")"
done
