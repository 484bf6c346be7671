#!/usr/bin/env bash
# Runs every fuzz target for SECONDS_PER_TARGET seconds (default 60) from the seeds in
# fuzz/seeds. Needs a nightly toolchain and cargo-fuzz; where there is none it says so and
# exits 0, since stable Rust runs the same laws as proptest properties in `cargo test`.
# A crash fails the run; libFuzzer leaves the input under fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "fuzz: no nightly toolchain here: fuzzing skipped (proptest properties cover stable)"
    exit 0
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install -q --locked cargo-fuzz || {
        echo "fuzz: cargo-fuzz could not be installed: fuzzing skipped"
        exit 0
    }
fi
cargo +nightly fuzz build -O
for target in $(cargo +nightly fuzz list); do
    corpus="${FUZZ_CORPUS:-/tmp/toolmend-fuzz-corpus}/$target"
    mkdir -p "$corpus"
    echo "fuzz: $target for ${seconds}s"
    log="$corpus.log"
    status=0
    cargo +nightly fuzz run -O "$target" "$corpus" "seeds/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
        -print_final_stats=1 >"$log" 2>&1 || status=$?
    grep -E "^stat::(number_of_executed_units|peak_rss_mb)|SUMMARY|panicked|Test unit written" "$log" || true
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$log"
        echo "fuzz: $target FAILED"
        exit 1
    fi
done
