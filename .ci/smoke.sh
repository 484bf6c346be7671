#!/usr/bin/env bash
# Installs a built toolmend (a wheel, or an sdist) into a fresh virtualenv of PYTHON and runs the README's main job
# and .ci/smoke.py in it, outside the checkout's source tree. Run by .ci/wheel.sh and the release workflow:
#   .ci/smoke.sh PYTHON DIST_FILE
set -euo pipefail
python=$1 dist=$2
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
bin=$work/venv/bin
[ -d "$bin" ] || bin=$work/venv/Scripts  # Windows
case "$dist" in
    *.whl) only_binary=(--only-binary=:all:) ;;  # the wheel and its dependencies' wheels: nothing compiled here
    *) only_binary=() ;;
esac
"$bin/python" -m pip install -q --disable-pip-version-check "${only_binary[@]}" "$dist"
cd "$work"
"$bin/python" -c 'import sys, toolmend; p = toolmend.__file__; assert "venv" in p, p; print("toolmend", p)'
# The README's main job: the repair log of a broken tool call.
"$bin/toolmend" repair --report "$root/examples/broken_tool_call.json" | tee main-job.txt
grep -q '"ok": true' main-job.txt || { echo "the main job printed no repaired call" >&2; exit 1; }
"$bin/python" "$root/.ci/smoke.py"
