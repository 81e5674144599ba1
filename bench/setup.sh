#!/usr/bin/env bash
# The comparison frameworks for bench/, in a venv of their own (never nbflow dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .benchvenv
.benchvenv/bin/pip install -q numpy 'tensorflow-cpu==2.21.*' 'torch==2.13.0'
