#!/usr/bin/env bash
# The idle dashboard's memory as its history fills, and what the memory is made of, beside htop
# in the same run: each in its own 80x24 tmux session on the live root.
#
#   benches/ring_rss.sh [SECONDS]        (default 180; a row every 30 s)
#
# perftop runs `-d 0.25 --keep 150s`: the default ring (ten minutes at 1 s, 600 samples) fills
# in 150 s instead of 600, though with samples a quarter of a second apart its frames are larger
# (PERFTOP_ARGS="-d 1" with SECONDS 660 runs the real thing). htop runs `-d 10`. Each row,
# from /proc/PID/status and smaps:
#   rss     VmRSS, what the issue's "peak RSS" target reads (hwm: VmHWM, its peak);
#   anon    RssAnon: the heap, the threads' malloc arenas and stacks (only swap can take it);
#   file    RssFile: pages of the program's and the libraries' files, mapped around each page
#           the program touched (the kernel maps a fault's neighbours too, and reads ahead):
#           clean, dropped by the kernel first when memory is short;
#   heap    the main [heap] mapping's Rss;
#   text    the Rss of the program's own executable mapping (r-xp), of its .text size.
# Environment: PERFTOP_BIN (default target/release/perftop, built if missing); PERFTOP_BASE, a
# second perftop beside it (row "perftop-base"); PERFTOP_ARGS (default "-d 0.25 --keep 150s").
set -euo pipefail

DUR=${1:-180}
# shellcheck source=benches/tmux_bench.sh
source "$(dirname "$0")/tmux_bench.sh"
trap 'tm kill-server 2>/dev/null || true; rm -rf "$TMP"' EXIT

ARGS=${PERFTOP_ARGS:--d 0.25 --keep 150s}
declare -A cmd=([perftop]="$BIN $ARGS")
[ -n "${PERFTOP_BASE:-}" ] && cmd[perftop-base]="$PERFTOP_BASE $ARGS"
command -v htop >/dev/null && cmd[htop]="htop -d 10"
declare -A pid exe
for name in "${!cmd[@]}"; do
    tm new-session -d -s "$name" -x 80 -y 24 "exec ${cmd[$name]}"
done
sleep 1
for name in "${!cmd[@]}"; do
    pid[$name]=$(tm list-panes -t "$name" -F '#{pane_pid}')
    exe[$name]=$(readlink "/proc/${pid[$name]}/exe")
done

kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# The Rss of the first mapping whose header line matches $2 (an awk pattern).
mapped() {
    awk -v want="$2" '
        /^[0-9a-f]+-[0-9a-f]+ / { hit = ($0 ~ want) }
        hit && /^Rss:/ { print $2; exit }' "/proc/$1/smaps"
}
text_kb() { size -A "$1" 2>/dev/null | awk '$1 == ".text" { printf "%d", $2 / 1024 }'; }

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, kernel $(uname -r); kB; perftop $ARGS"
echo "| s | program | rss | hwm | anon | file | heap | text (.text size) |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
for ((t = 30; t <= DUR; t += 30)); do
    sleep 30
    for name in $(printf '%s\n' "${!cmd[@]}" | sort); do
        p=${pid[$name]}
        [ -d "/proc/$p" ] || { echo "| $t | $name | exited | | | | | |"; continue; }
        e=${exe[$name]}
        echo "| $t | $name | $(kb "$p" VmRSS) | $(kb "$p" VmHWM) | $(kb "$p" RssAnon) | $(kb "$p" RssFile) | $(mapped "$p" '\[heap\]') | $(mapped "$p" "r-xp .*$e\$") ($(text_kb "$e")) |"
    done
done
