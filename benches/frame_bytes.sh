#!/usr/bin/env bash
# Bytes each tool writes to its terminal (what an SSH link carries), at 80x24 and 200x50, 1 s
# interval, on the live root (/). Every tool runs under `script -q -f` (which logs the pty's
# output to a typescript file) inside its own tmux session; all six runs go at the same time.
#
#   benches/frame_bytes.sh [SECONDS]    (default 20; needs tmux and script; htop and btop are
#                                        left out when missing)
#
# startup = bytes in the first 2 s (screen set-up and the first frames); steady bytes/s = bytes
# written over the next SECONDS / SECONDS; bytes/frame = steady bytes / frames, where frames is
# the number of synchronized-output blocks (ESC[?2026h) for perftop and the number of seconds
# for htop and btop (one redraw per interval). perftop's first frame = bytes in the first 0.5 s
# (the second sample comes 1 s after the first). The typescript's "Script started" header line
# is not counted.
#
# Intervals: perftop -d 1; htop -d 10 (tenths of a second); btop update_ms = 1000 in a private
# config dir (XDG_CONFIG_HOME). Environment: PERFTOP_BIN (default target/release/perftop).
set -euo pipefail

DUR=${1:-20}
WARM=2
cd "$(dirname "$0")/.."
BIN=${PERFTOP_BIN:-$PWD/target/release/perftop}
if [ ! -x "$BIN" ]; then
    cargo build --release
fi
command -v tmux >/dev/null || { echo "tmux is not installed" >&2; exit 1; }
command -v script >/dev/null || { echo "script (util-linux) is not installed" >&2; exit 1; }

TMP=$(mktemp -d)
tm() { tmux -S "$TMP/tmux.sock" -f /dev/null "$@"; }
pids=()
cleanup() {
    # `script` outlives tmux's SIGHUP and keeps its own pty, so stop each tool and its script.
    local p c
    for p in "${pids[@]}"; do
        for c in $(pgrep -P "$p"); do
            kill "$c" 2>/dev/null || true
        done
        kill "$p" 2>/dev/null || true
    done
    tm kill-server 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

mkdir -p "$TMP/xdg/btop"
printf 'update_ms = 1000\n' >"$TMP/xdg/btop/btop.conf"

declare -A cmd=([perftop]="$BIN -d 1")
command -v htop >/dev/null && cmd[htop]="htop -d 10"
command -v btop >/dev/null && cmd[btop]="env XDG_CONFIG_HOME=$TMP/xdg btop --utf-force"
runs=()
for size in 80x24 200x50; do
    for t in perftop htop btop; do
        [ -n "${cmd[$t]:-}" ] || continue
        r="$t-$size"
        tm new-session -d -s "$r" -x "${size%x*}" -y "${size#*x}" \
            "exec script -q -f -c '${cmd[$t]}' $TMP/$r.ts"
        runs+=("$r")
        pids+=("$(tm display-message -p -t "$r" '#{pane_pid}')")
    done
done

header() { head -n 1 "$1" | wc -c; } # the "Script started ..." line
size() { stat -c %s "$1"; }
declare -A first warm hdr
sleep 0.5
for r in "${runs[@]}"; do
    hdr[$r]=$(header "$TMP/$r.ts")
    first[$r]=$(($(size "$TMP/$r.ts") - ${hdr[$r]}))
done
sleep "$WARM"
for r in "${runs[@]}"; do
    warm[$r]=$(size "$TMP/$r.ts")
done
sleep "$DUR"
declare -A end
for r in "${runs[@]}"; do
    end[$r]=$(size "$TMP/$r.ts")
done

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, kernel $(uname -r), TERM inside tmux: $(tm display-message -p '#{default-terminal}' 2>/dev/null || echo tmux-256color)"
echo "# ${DUR} s steady state after ${WARM}.5 s, 1 s interval, six runs at once"
echo
echo "| tool | size | startup bytes (first ${WARM}.5 s) | first frame | steady bytes/s | frames | bytes/frame |"
echo "|---|---|---:|---:|---:|---:|---:|"
for r in "${runs[@]}"; do
    t=${r%-*}
    s=${r#*-}
    bytes=$((${end[$r]} - ${warm[$r]}))
    startup=$((${warm[$r]} - ${hdr[$r]}))
    if [ "$t" = perftop ]; then
        frames=$(tail -c +"$((${warm[$r]} + 1))" "$TMP/$r.ts" | head -c "$bytes" | grep -ao $'\e\\[?2026h' | wc -l)
        ff=${first[$r]}
    else
        frames=$DUR
        ff="-"
    fi
    awk -v t="$t" -v s="$s" -v st="$startup" -v ff="$ff" -v b="$bytes" -v d="$DUR" -v f="$frames" 'BEGIN {
        printf "| %s | %s | %d | %s | %.0f | %d | %.0f |\n", t, s, st, ff, b / d, f, (f > 0 ? b / f : 0)
    }'
done
