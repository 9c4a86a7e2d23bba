#!/usr/bin/env bash
# Lighthouse (mobile, its default) on the six page kinds a reader lands on (round, result, system, log, compare,
# organisation: bench/lighthouse/pages.py), served as in production (gunicorn, DEBUG off, collectstatic +
# whitenoise), run against Debian's chromium (CHROME_PATH). Prints each page's performance, accessibility,
# best-practices and SEO scores and fails (exit 1) under the targets (issue 39: at least 95, 100, 100 and 95;
# bench/lighthouse/report.py); the full reports are left in artifacts/lighthouse/. `make lighthouse`; CI runs it.
#
# The catalogue is the shared v5.1 round ingested once into an embedded SQLite under LIGHTHOUSE_VAR (kept for
# the next run; delete the folder to rebuild). Lighthouse itself comes from npm (bench/lighthouse/package.json).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PY:-.venv/bin/python}
PORT=${LIGHTHOUSE_PORT:-8093}
export VAR_DIR=${LIGHTHOUSE_VAR:-$ROOT/var/lighthouse}
export CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium}
export MLPERF_SHARED_DIR=${MLPERF_SHARED_DIR:-$ROOT/../shared/mlperf}
export DEBUG=0 ALLOWED_HOSTS=127.0.0.1,localhost CELERY_TASK_ALWAYS_EAGER=1
unset DATABASE_URL CELERY_BROKER_URL MEDIA_ROOT STATIC_ROOT
OUT=$ROOT/artifacts/lighthouse
mkdir -p "$VAR_DIR" "$OUT"

if [ ! -x bench/lighthouse/node_modules/.bin/lighthouse ]; then
  (cd bench/lighthouse && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ ! -f "$VAR_DIR/.loaded" ]; then
  echo "lighthouse: ingesting the v5.1 round into $VAR_DIR (once)"
  $PY manage.py migrate --noinput -v0 --skip-checks
  $PY manage.py load_rounds -v0 --skip-checks >/dev/null
  $PY manage.py ingest "$MLPERF_SHARED_DIR/training_v5.1_results.tar.xz" --round training-v5.1 --publish 2>/dev/null >/dev/null
  touch "$VAR_DIR/.loaded"
fi
$PY manage.py collectstatic --noinput -v0 --skip-checks

$PY -m gunicorn portal.wsgi --bind "127.0.0.1:$PORT" --workers 2 --log-level warning &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/r/training-v5.1/" && break; sleep 0.2; done
# Warm: each worker renders the page once into its own cache (the default cache is per process), as a
# site's pages are between publications; Lighthouse then measures what readers get.
for _ in $(seq 8); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/r/training-v5.1/"; done

# The six page kinds a reader lands on (bench/lighthouse/pages.py picks them from the round).
KINDS=()
declare -A PAGE
while read -r kind path; do
  if [ "$path" = "-" ]; then echo "lighthouse: no $kind page in this portal yet: not measured"; continue; fi
  KINDS+=("$kind"); PAGE[$kind]=$path
  curl -sf -o /dev/null "http://127.0.0.1:$PORT$path"  # each worker's cache, as for the round page above
  curl -sf -o /dev/null "http://127.0.0.1:$PORT$path"
done < <($PY bench/lighthouse/pages.py)
# Scores swing with the machine's load (a shared 2-core machine: blocking time doubles under load). Each page
# runs once; a page whose run misses a target runs RUNS - 1 more times and the median of its runs counts
# (report.py --missed tells which). A run that meets every target is not rerun: under load a page scores lower,
# not higher, so a pass is not luck, and one run a page instead of three takes CI's Lighthouse from about
# 5 to about 2 minutes (issue 35). About 15-40 s a run on two shared cores.
RUNS=${LIGHTHOUSE_RUNS:-3}
# A run is tried twice: on a fresh machine Lighthouse once lost the trace of its first page load
# (NO_NAVSTART, "please run Lighthouse again"), and the same run then passed.
lighthouse_run() {  # kind, run number
  local url="http://127.0.0.1:$PORT${PAGE[$1]}"
  for attempt in 1 2; do
    if bench/lighthouse/node_modules/.bin/lighthouse "$url" --quiet \
      --only-categories=performance,accessibility,best-practices,seo \
      --chrome-flags="--headless=new --no-sandbox --disable-dev-shm-usage" \
      --output=json --output=html --output-path="$OUT/$1-$2"; then
      return 0
    fi
  done
  return 1
}
rm -f "$OUT"/*.report.json "$OUT"/*.report.html
for kind in "${KINDS[@]}"; do
  lighthouse_run "$kind" 1
  if ! $PY bench/lighthouse/report.py --missed "$OUT" "$kind"; then
    for n in $(seq 2 "$RUNS"); do lighthouse_run "$kind" "$n"; done
  fi
done

# Fails (exit 1) when a page's median misses a target.
$PY bench/lighthouse/report.py "$OUT" "${KINDS[@]}"
