#!/usr/bin/env bash
# Builds the wheel users install and proves it, as the release workflow does (.github/workflows/release.yml
# runs the same maturin commands and .ci/smoke.py):
#   1. the manylinux2014 (glibc 2.17) x86_64 wheel, linked by zig from PyPI and audited by maturin
#      (--compatibility fails the build if the extension needs newer symbols than manylinux2014 allows);
#   2. its tag, glibc baseline and size checked (build-wheel.sh fails a wheel over 4 MB);
#   3. installed into a fresh virtualenv of every CPython from 3.10 up that pyenv has, with no Rust toolchain
#      on PATH, and in each the README's main job and .ci/smoke.py run;
#   4. the sdist built, its contents checked, and built and installed from it into one virtualenv.
# Environment: WHEEL_OUT (default dist/), WHEEL_TOOLS (the venv holding maturin and ziglang, default
# .wheel-tools/), CARGO_TARGET_DIR (default target/: the sdist build reuses what .ci/run compiled before it),
# WHEEL_SDIST_PROFILE the cargo profile of the build from the sdist (default dev), WHEEL_SKIP_SDIST_INSTALL=1
# checks the sdist's contents only.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${WHEEL_OUT:-$root/dist}
tools=${WHEEL_TOOLS:-$root/.wheel-tools}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$SECONDS
say() { printf '[wheel.sh %4ds] %s\n' "$((SECONDS - started))" "$*"; }

# maturin and zig come from PyPI; maturin runs `python3 -m ziglang`, so the tools venv's bin goes first on PATH.
if [ ! -x "$tools/bin/maturin" ] || ! "$tools/bin/python" -c 'import ziglang' 2>/dev/null; then
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install -q --upgrade pip
    "$tools/bin/python" -m pip install -q "maturin>=1.5,<2" ziglang
fi
export PATH="$tools/bin:$PATH"

rm -rf "$out" && mkdir -p "$out"
say "building the manylinux2014 x86_64 wheel (maturin $(maturin --version | cut -d' ' -f2), zig $(python3 -m ziglang version))"
bash .ci/build-wheel.sh "$out" x86_64-unknown-linux-gnu manylinux2014
wheels=("$out"/toolmend-*.whl)
[ "${#wheels[@]}" -eq 1 ] || { echo "expected one wheel in $out, found: ${wheels[*]}" >&2; exit 1; }
wheel=${wheels[0]}
name=$(basename "$wheel")
case "$name" in
    *-cp310-abi3-manylinux2014_x86_64*.whl | *-cp310-abi3-manylinux_2_17_x86_64*.whl) ;;
    *) echo "wheel $name is not an abi3 manylinux2014 / manylinux_2_17 x86_64 wheel" >&2; exit 1 ;;
esac
# The extension must not ask for a glibc newer than 2.17 (maturin's audit checked this; read it again here).
"$tools/bin/python" - "$wheel" <<'EOF'
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    so = [n for n in z.namelist() if n.endswith(".so")]
    assert so == ["toolmend/_core.abi3.so"], so
    data = z.read(so[0])
versions = sorted({tuple(map(int, v.split(b"."))) for v in re.findall(rb"GLIBC_(\d+\.\d+(?:\.\d+)?)", data)})
assert versions and versions[-1] <= (2, 17), f"needs glibc {versions[-1]}"
print(f"extension {len(data)} bytes, newest glibc symbol version {'.'.join(map(str, versions[-1]))}")
EOF

# Every CPython from 3.10 up that pyenv has, each in a fresh venv with no Rust toolchain on PATH.
clean_path=/usr/local/bin:/usr/bin:/bin
tested=()
for python in "$pyenv_root"/versions/3.*/bin/python3; do
    version=$(basename "$(dirname "$(dirname "$python")")")
    [[ "$version" =~ ^3\.([0-9]+)\.[0-9]+$ ]] || continue
    [ "${BASH_REMATCH[1]}" -ge 10 ] || continue
    say "Python $version: fresh venv, wheel installed, main job and smoke test"
    env -i HOME="$HOME" PATH="$clean_path" bash -c \
        '! command -v cargo && ! command -v rustc && ! command -v maturin' >/dev/null \
        || { echo "a Rust toolchain is on the smoke test's PATH" >&2; exit 1; }
    env -i HOME="$HOME" PATH="$clean_path" bash .ci/smoke.sh "$python" "$wheel" > "$work/smoke-$version.txt" 2>&1 \
        || { cat "$work/smoke-$version.txt"; exit 1; }
    tail -1 "$work/smoke-$version.txt"
    tested+=("$version")
done
[ "${#tested[@]}" -gt 0 ] || { echo "no CPython 3.10+ found under $pyenv_root/versions" >&2; exit 1; }
say "wheel installed and smoke-tested on Python ${tested[*]}"

# The source distribution: built, its contents checked, then built and installed from it.
maturin sdist --out "$out"
sdists=("$out"/toolmend-*.tar.gz)
sdist=${sdists[0]}
tar -tzf "$sdist" > "$work/sdist.txt"
for need in pyproject.toml Cargo.toml Cargo.lock README.md rust/core/Cargo.toml rust/core/src/lib.rs \
    rust/python/Cargo.toml python/toolmend/__init__.py python/toolmend/py.typed; do
    grep -q "^toolmend-[^/]*/$need\$" "$work/sdist.txt" || { echo "sdist lacks $need" >&2; exit 1; }
done
say "sdist $(basename "$sdist"): $(stat -c %s "$sdist") bytes, $(wc -l < "$work/sdist.txt") files"
if [ "${WHEEL_SKIP_SDIST_INSTALL:-0}" = 1 ]; then
    say "sdist install skipped (WHEEL_SKIP_SDIST_INSTALL=1): contents checked only"
else
    # A source build needs Rust (cargo on PATH); pip builds it with maturin in an isolated environment. It is
    # built by the python3 first on PATH (in .ci/run, the .venv that `pip install -e .` built with) into the
    # same CARGO_TARGET_DIR, so the dependencies compiled for the editable install are reused, then installed.
    # The profile is dev by default (WHEEL_SDIST_PROFILE): the check is that the sdist builds and installs, and a
    # second fat-LTO release build would add minutes to CI; the release workflow's sdist job builds it in release.
    MATURIN_PEP517_ARGS="--profile ${WHEEL_SDIST_PROFILE:-dev}" \
        python3 -m pip wheel -q --disable-pip-version-check --no-deps -w "$work/from-sdist" "$sdist"
    bash .ci/smoke.sh python3 "$work"/from-sdist/toolmend-*.whl > "$work/smoke-sdist.txt" 2>&1 \
        || { cat "$work/smoke-sdist.txt"; exit 1; }
    tail -1 "$work/smoke-sdist.txt"
    say "sdist built and installed, smoke test passed"
fi
say "done"
