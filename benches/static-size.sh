#!/usr/bin/env bash
# The static binary's size budget (issue 43: at most 4 MB stripped, here 4 MiB = 4,194,304
# bytes, the unit the docs' "MB" figures use).
#
#   benches/static-size.sh            build `--profile static` for musl and check its size
#   benches/static-size.sh --config   only check that the settings the budget rests on are in
#                                     place (seconds; .ci/run does this)
#
# The build is the release one, fat LTO in one codegen unit: ~20 min on a 2-vCPU VM, so it is
# run by hand before a release, not by CI. Needs the musl target and musl-gcc (README
# "Install"). Exit 1 when over budget or a setting is gone.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=4194304
target=x86_64-unknown-linux-musl

# What the size rests on, measured per setting in Cargo.toml's comment above [profile.static].
config_check() {
    local profile bad=0
    profile=$(sed -n '/^\[profile.static\]/,/^\[/p' Cargo.toml)
    for want in 'lto = "fat"' 'codegen-units = 1' 'opt-level = "z"' 'panic = "abort"' 'strip = true'; do
        grep -qxF "$want" <<<"$profile" || { echo "[profile.static] lacks: $want"; bad=1; }
    done
    # zstd's default features (legacy format decoders, the dictionary builder) are not built.
    grep -qE '^zstd = \{ version = "[^"]+", default-features = false' Cargo.toml ||
        { echo "zstd is built with its default features"; bad=1; }
    if cargo tree -e features -i zstd-sys --target "$target" --offline 2>/dev/null |
        grep -qE 'feature "(legacy|zdict_builder)"'; then
        echo "zstd-sys is built with legacy or zdict_builder (cargo tree -e features -i zstd-sys)"
        bad=1
    fi
    grep -qE '^small-zstd = \["zstd/thin"\]' Cargo.toml || { echo "no feature small-zstd"; bad=1; }
    [ "$bad" = 0 ] && echo "static profile settings: ok"
    return "$bad"
}

config_check
[ "${1:-}" = "--config" ] && exit 0

start=$(date +%s)
CC_x86_64_unknown_linux_musl=musl-gcc cargo build --profile static --features small-zstd \
    --target "$target"
bin="${CARGO_TARGET_DIR:-target}/$target/static/perftop"
size=$(stat -c %s "$bin")
file -b "$bin"
echo "static binary: $size bytes ($(awk -v s="$size" 'BEGIN { printf "%.2f", s / 1048576 }') MiB), budget $budget; built in $(($(date +%s) - start)) s"
file -b "$bin" | grep -q 'stripped' || { echo "not stripped"; exit 1; }
[ "$size" -le "$budget" ] || { echo "over budget by $((size - budget)) bytes"; exit 1; }
