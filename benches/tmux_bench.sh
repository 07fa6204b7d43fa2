# Sourced by the benches that run perftop in tmux sessions (overhead.sh, ring_rss.sh): the build
# to run, a scratch directory and a private tmux server to run it in.
#
#   PERFTOP_BIN: the build (default target/release/perftop, built if missing). Sets BIN, TMP and
#   `tm` (tmux on the scratch directory's socket); the caller removes TMP and stops the server.

cd "$(dirname "$0")/.."
BIN=${PERFTOP_BIN:-$PWD/target/release/perftop}
if [ ! -x "$BIN" ]; then
    cargo build --release
fi
command -v tmux >/dev/null || { echo "tmux is not installed" >&2; exit 1; }

TMP=$(mktemp -d)
tm() { tmux -S "$TMP/tmux.sock" -f /dev/null "$@"; }
