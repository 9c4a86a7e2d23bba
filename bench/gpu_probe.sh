#!/usr/bin/env bash
# The reference-check probes at their real sizes on this machine's GPU: prints bench/probe.py's table.
#
#   bash bench/gpu_probe.sh                 # from anywhere; extra arguments go to bench/probe.py
#
# For a bare GPU host with its own Python: no Redis, no database, no Django, no portal settings.
# It uses the first of $PYTHON, python3, python that imports torch with CUDA; else it makes a
# virtual environment under var/gpu-probe-venv and installs torch==2.13.0 from whatever index pip
# is configured with (no internet: point PIP_INDEX_URL or PIP_FIND_LINKS at a local mirror).
# With $OUT set, the figures are also written to $OUT/probe.json and the table to $OUT/probe.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

has_cuda_torch() {
  "$1" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1
}

PY=""
for candidate in ${PYTHON:-} python3 python; do
  if command -v "$candidate" >/dev/null 2>&1 && has_cuda_torch "$candidate"; then
    PY=$(command -v "$candidate")
    break
  fi
done
if [ -z "$PY" ]; then
  echo "no Python here imports a torch that sees CUDA: installing torch==2.13.0 into var/gpu-probe-venv"
  base=$(command -v "${PYTHON:-python3}")
  "$base" -m venv var/gpu-probe-venv
  var/gpu-probe-venv/bin/python -m pip install -q torch==2.13.0
  PY=var/gpu-probe-venv/bin/python
  has_cuda_torch "$PY" || { echo "torch==2.13.0 installed but it sees no CUDA device" >&2; exit 1; }
fi

command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
"$PY" -c 'import sys, torch; print(f"python {sys.version.split()[0]} at {sys.executable}, torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")'

args=(--device cuda --full --no-agent)
if [ -n "${OUT:-}" ]; then
  args+=(--json "$OUT/probe.json")
  PYTHONUNBUFFERED=1 "$PY" bench/probe.py "${args[@]}" "$@" 2>&1 | tee "$OUT/probe.txt"
  exit "${PIPESTATUS[0]}"
fi
PYTHONUNBUFFERED=1 exec "$PY" bench/probe.py "${args[@]}" "$@"
