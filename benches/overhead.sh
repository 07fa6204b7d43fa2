#!/usr/bin/env bash
# perftop's own cost beside htop, btop and atop, all running at the same time at a 1 s interval,
# each in its own tmux session (a real pty) at 80x24, on the live root (/).
#
#   benches/overhead.sh [SECONDS]      (default 60; needs tmux, htop, btop, atop; any missing one
#                                       is left out of the table)
#
# CPU: utime+stime (fields 14 and 15 of /proc/PID/stat, in clock ticks) read after a 2 s warm-up
# and again SECONDS later; "% of one core" = CPU seconds / SECONDS. "startup" is the CPU time
# used in the warm-up. "ms a second" is the same window from the scheduler's own nanosecond
# clock (first field of /proc/PID/task/*/schedstat, summed over the threads alive at both
# reads): at well under 1 % of a core a 60 s run is 10-20 ticks, and one tick is 5-10 % of it;
# "x htop" divides it by htop's. Memory: VmRSS (now) and VmHWM (peak) from /proc/PID/status.
#
# Intervals: perftop -d 1; htop -d 10 (tenths of a second); btop update_ms = 1000 in a private
# config dir (XDG_CONFIG_HOME; btop 1.2 has no command-line option for it); atop 1.
# Environment: PERFTOP_BIN (default target/release/perftop, built if missing); PERFTOP_BASE, a
# second perftop binary run beside it in the same run (row "perftop-base"), for before/after
# pairs that share the machine's load.
#
# Zoomed mode (the Processes pane's full list on screen, issue 42's "2,000 processes, Processes
# pane zoomed" row):
#
#   ZOOM_PROCS=2000 benches/overhead.sh [SECONDS]
#
# starts idle `sleep` processes until /proc lists ZOOM_PROCS processes, zooms perftop's
# Processes pane (keys `8` and Enter) and runs perftop beside htop only, both at 80x24.
# UNZOOMED=1 with ZOOM_PROCS leaves the pane as it opens (the "not zoomed" row).
set -euo pipefail

DUR=${1:-60}
WARM=2
# shellcheck source=benches/tmux_bench.sh
source "$(dirname "$0")/tmux_bench.sh"
declare -A pid
cleanup() {
    local p
    for p in "${pid[@]}"; do
        kill $p 2>/dev/null || true
    done
    tm kill-server 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

ZOOM_PROCS=${ZOOM_PROCS:-}
sleepers=()
if [ -n "$ZOOM_PROCS" ]; then
    have=$(ls -d /proc/[0-9]* | wc -l)
    for ((i = have; i < ZOOM_PROCS; i++)); do
        sleep 100000 &
        sleepers+=($!)
    done
    pid[sleepers]="${sleepers[*]:-}"
fi

mkdir -p "$TMP/xdg/btop"
printf 'update_ms = 1000\n' >"$TMP/xdg/btop/btop.conf"

TCK=$(getconf CLK_TCK)
tools=()
start() { # name command...
    local name=$1
    shift
    # exec: the pane's pid is the tool's pid.
    tm new-session -d -s "$name" -x 80 -y 24 "exec $*"
    tools+=("$name")
}
start perftop "$BIN" -d 1
[ -n "${PERFTOP_BASE:-}" ] && start perftop-base "$PERFTOP_BASE" -d 1
command -v htop >/dev/null && start htop htop -d 10
if [ -z "$ZOOM_PROCS" ]; then
    command -v btop >/dev/null && start btop env XDG_CONFIG_HOME="$TMP/xdg" btop --utf-force
    command -v atop >/dev/null && start atop atop 1
elif [ -z "${UNZOOMED:-}" ]; then
    sleep 1
    tm send-keys -t perftop 8 Enter
    [ -n "${PERFTOP_BASE:-}" ] && tm send-keys -t perftop-base 8 Enter
fi

declare -A cpu0 ns0 ms_s
for t in "${tools[@]}"; do
    pid[$t]=$(tm display-message -p -t "$t" '#{pane_pid}')
done

ticks() { # utime+stime of a pid; the comm field may hold spaces, so cut after the last ')'
    local s
    s=$(cat "/proc/$1/stat") || return 1
    s=${s##*) }
    # after "comm) ": field 3 is state, so utime (14) and stime (15) are words 12 and 13.
    set -- $s
    echo $((${12} + ${13}))
}
runtime_ns() { # the scheduler's CPU time of every thread of a pid, in ns
    # `%.0f`, not `%d`: mawk's `%d` stops at 2^31 - 1 ns (2.1 s of CPU), which htop beside
    # 2,000 processes passes within a minute.
    cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

sleep "$WARM"
for t in "${tools[@]}"; do
    cpu0[$t]=$(ticks "${pid[$t]}")
    ns0[$t]=$(runtime_ns "${pid[$t]}")
done
sleep "$DUR"

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r)"
echo "# ${DUR} s at a 1 s interval, all tools at once, 80x24 each; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$ZOOM_PROCS" ]; then
    echo "# perftop's Processes pane $([ -n "${UNZOOMED:-}" ] && echo "not zoomed (its ~10-30 busiest)" || echo "zoomed (the full list)"); $(ls -d /proc/[0-9]* | wc -l) processes at the end"
fi
echo
for t in "${tools[@]}"; do
    ms_s[$t]=$(awk -v a="${ns0[$t]}" -v b="$(runtime_ns "${pid[$t]}")" -v dur="$DUR" 'BEGIN { printf "%.3f", (b - a) / 1e6 / dur }')
done
echo "| tool | CPU s in ${DUR} s | % of one core | ms a second (schedstat) | x htop | startup CPU s | RSS MB | peak RSS MB |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for t in "${tools[@]}"; do
    p=${pid[$t]}
    if ! now=$(ticks "$p" 2>/dev/null); then
        echo "| $t | exited early | | | | | | |"
        continue
    fi
    d=$((now - ${cpu0[$t]}))
    rss=$(status_kb "$p" VmRSS)
    hwm=$(status_kb "$p" VmHWM)
    awk -v t="$t" -v d="$d" -v s0="${cpu0[$t]}" -v hz="$TCK" -v dur="$DUR" -v rss="$rss" -v hwm="$hwm" \
        -v ms="${ms_s[$t]}" -v htop="${ms_s[htop]:-}" 'BEGIN {
        x = (htop != "" && htop + 0 > 0) ? sprintf("%.2f", ms / htop) : ""
        printf "| %s | %.2f | %.2f%% | %.3f | %s | %.2f | %.1f | %.1f |\n", t, d / hz, 100 * d / hz / dur, ms, x, s0 / hz, rss / 1024, hwm / 1024
    }'
done
echo
echo "versions: perftop $("$BIN" --version 2>/dev/null | awk '{ print $2 }'), $(htop --version 2>/dev/null | head -1), btop $(btop --version 2>/dev/null | awk '{ print $NF }'), atop $(atop -V 2>/dev/null | awk '{ print $2 }')"
