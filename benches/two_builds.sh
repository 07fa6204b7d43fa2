# Sourced by the side-by-side benches (export_ab.sh, record_ab.sh): the two builds, a scratch
# directory and the cleanup that stops what they started (PIDs in `pids`) and removes it.
#
#   PERFTOP_BIN: the new build (default target/release/perftop); PERFTOP_BASE: the base build.

cd "$(dirname "$0")/.."
NEW=${PERFTOP_BIN:-$PWD/target/release/perftop}
BASE=${PERFTOP_BASE:?PERFTOP_BASE: the build to compare with}
TMP=$(mktemp -d)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
