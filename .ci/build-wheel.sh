#!/usr/bin/env bash
# One wheel, built by the command both .ci/wheel.sh (here) and .github/workflows/release.yml (every platform) run:
#   .ci/build-wheel.sh OUT_DIR RUST_TARGET [COMPATIBILITY]
# With COMPATIBILITY (manylinux2014, musllinux_1_2) the extension is linked by zig (`python3 -m ziglang`,
# from PyPI) for that baseline and maturin audits it: the build fails if the extension needs newer symbols.
# macOS and Windows wheels are built by the platform's own linker.
set -euo pipefail
out=$1 target=$2 compatibility=${3:-}
args=(build --release --locked --target "$target" --out "$out")
if [ -n "$compatibility" ]; then
    args+=(--zig --compatibility "$compatibility")
fi
echo "+ maturin ${args[*]}"
maturin "${args[@]}"
# The wheel's size is held: past 4 MB fails (benches/README.md says what the bytes are).
for wheel in "$out"/*.whl; do
    bytes=$(wc -c < "$wheel" | tr -d ' ')
    echo "$(basename "$wheel"): $bytes bytes"
    if [ "$bytes" -gt 4000000 ]; then
        echo "$wheel is $bytes bytes, over the 4 MB (4000000 byte) limit" >&2
        exit 1
    fi
done
