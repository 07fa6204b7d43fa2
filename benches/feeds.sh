#!/usr/bin/env bash
# perftop's recorder and exporter beside the tools a host would otherwise run for the same job,
# all at once at a 1 s interval on the live root (/), so the load is the same for each:
#
#   recorders: perftop record -d 1        atop -w FILE 1        sadc -S XALL 1 FILE (sysstat)
#   exporters: perftop export --listen    perftop export --textfile    prometheus-node-exporter
#              (the two /metrics servers are scraped once a second by one curl loop, as a
#              Prometheus with a 1 s scrape interval would)
#
#   benches/feeds.sh [SECONDS]    (default 120; a tool that is not installed is left out)
#
# CPU: utime+stime (fields 14 and 15 of /proc/PID/stat) after a 5 s warm-up and again SECONDS
# later, divided by SECONDS: milliseconds of CPU an interval, start-up left out (the recorder's
# own summary line counts its start-up). Clock ticks are 10 ms, so a run of 120 s measures each
# tool to about +-0.1 ms an interval. Bytes: the file's growth over the same window divided by
# SECONDS. Environment: PERFTOP_BIN (default target/release/perftop, built if missing).
set -euo pipefail

DUR=${1:-120}
WARM=5
cd "$(dirname "$0")/.."
BIN=${PERFTOP_BIN:-$PWD/target/release/perftop}
if [ ! -x "$BIN" ]; then
    cargo build --release
fi
TMP=$(mktemp -d)
declare -A pid
cleanup() {
    local p
    for p in "${pid[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

SADC=
for c in /usr/lib/sysstat/sadc /usr/lib64/sa/sadc /usr/libexec/sa/sadc; do
    [ -x "$c" ] && SADC=$c && break
done
NODE=$(command -v prometheus-node-exporter || command -v node_exporter || true)

tools=()
start() { # name file command...
    local name=$1
    shift
    "$@" >"$TMP/$name.out" 2>&1 &
    pid[$name]=$!
    tools+=("$name")
}
mkdir -p "$TMP/textfile"
start "perftop record" "$BIN" record -d 1 -o "$TMP/perftop.ptrec"
command -v atop >/dev/null && start "atop -w" atop -w "$TMP/atop.raw" 1
[ -n "$SADC" ] && start "sadc -S XALL" "$SADC" -S XALL 1 "$TMP/sa.data"
start "perftop export --listen" "$BIN" export --listen 127.0.0.1:18427 -d 1
start "perftop export --textfile" "$BIN" export --textfile "$TMP/textfile" -d 1
[ -n "$NODE" ] && start "node_exporter" "$NODE" --web.listen-address=127.0.0.1:19100
urls=(http://127.0.0.1:18427/metrics)
[ -n "$NODE" ] && urls+=(http://127.0.0.1:19100/metrics)
(
    while :; do
        for u in "${urls[@]}"; do
            curl -s -o /dev/null --max-time 2 "$u" || true
        done
        sleep 1
    done
) &
pid[scraper]=$!
declare -A file=(["perftop record"]="$TMP/perftop.ptrec" ["atop -w"]="$TMP/atop.raw"
    ["sadc -S XALL"]="$TMP/sa.data")

ticks() { # utime+stime of a pid; the comm field may hold spaces, so cut after the last ')'
    local s
    s=$(cat "/proc/$1/stat") || return 1
    s=${s##*) }
    set -- $s
    echo $((${12} + ${13}))
}
size() { stat -c %s "$1" 2>/dev/null || echo 0; }

sleep "$WARM"
declare -A cpu0 bytes0
for t in "${tools[@]}"; do
    cpu0[$t]=$(ticks "${pid[$t]}" || echo 0)
    [ -n "${file[$t]:-}" ] && bytes0[$t]=$(size "${file[$t]}")
done
sleep "$DUR"

TCK=$(getconf CLK_TCK)
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, kernel $(uname -r), $(ls -d /proc/[0-9]* 2>/dev/null | wc -l) processes"
echo "# ${DUR} s at a 1 s interval, all at once; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| tool | ms CPU an interval | bytes an interval |"
echo "|---|---:|---:|"
for t in "${tools[@]}"; do
    p=${pid[$t]}
    if ! now=$(ticks "$p" 2>/dev/null); then
        echo "| $t | exited early: $(tail -c 200 "$TMP/$t.out" | tr '\n' ' ') | |"
        continue
    fi
    b=
    if [ -n "${file[$t]:-}" ]; then
        b=$(awk -v a="${bytes0[$t]}" -v z="$(size "${file[$t]}")" -v d="$DUR" 'BEGIN { printf "%.0f", (z - a) / d }')
    fi
    awk -v t="$t" -v d="$((now - ${cpu0[$t]}))" -v hz="$TCK" -v dur="$DUR" -v b="$b" 'BEGIN {
        printf "| %s | %.2f | %s |\n", t, 1000 * d / hz / dur, b
    }'
done
