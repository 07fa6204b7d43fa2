#!/usr/bin/env bash
# Two builds of the dashboard side by side on a big synthetic host, at once, so the load is the
# same for both: each in its own 80x24 tmux pane with `--root TREE -d 1`; CPU (utime + stime
# of /proc/PID/stat) from 20 s after start to SECONDS later, as % of one core.
#
#   cargo bench --bench sample -- write /dev/shm/h4096 4096 1     (the tree, once)
#   PERFTOP_BIN=NEW PERFTOP_BASE=BASE benches/big_ab.sh [TREE] [SECONDS]
#                                               (default /dev/shm/h4096, 60)
#
# Compare base and new within one run only.
set -euo pipefail

TREE=${1:-/dev/shm/h4096}
SECS=${2:-60}
# shellcheck source=benches/two_builds.sh
source "$(dirname "$0")/two_builds.sh"
[ -d "$TREE/proc" ] || {
    echo "no tree at $TREE: cargo bench --bench sample -- write $TREE 4096 1" >&2
    exit 2
}
SESSION=perftop-big-ab-$$
tmux kill-session -t "$SESSION" 2>/dev/null || true
tmux new-session -d -s "$SESSION" -x 80 -y 24 "exec $BASE --root $TREE -d 1"
tmux new-window -t "$SESSION" "exec $NEW --root $TREE -d 1"
trap 'tmux kill-session -t "$SESSION" 2>/dev/null || true; cleanup' EXIT
pid_of() { tmux list-panes -t "$SESSION:$1" -F '#{pane_pid}'; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
sleep 20
base_pid=$(pid_of 0)
new_pid=$(pid_of 1)
b0=$(ticks "$base_pid")
n0=$(ticks "$new_pid")
sleep "$SECS"
b1=$(ticks "$base_pid")
n1=$(ticks "$new_pid")
hz=$(getconf CLK_TCK)
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $TREE, $SECS s from 20 s after start; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
for which in base new; do
    if [ "$which" = base ]; then t=$((b1 - b0)); else t=$((n1 - n0)); fi
    echo "$which: $t ticks, $(awk -v t="$t" -v s="$SECS" -v hz="$hz" 'BEGIN { printf "%.1f", 100 * t / hz / s }') % of a core"
done
