#!/usr/bin/env bash
# Lighthouse on the v5.1 round page, served as in production (gunicorn, DEBUG off, collectstatic + whitenoise),
# run against Debian's chromium (CHROME_PATH). Prints the performance, accessibility and best-practices scores
# (targets, issue 28: at least 95, 100 and 100) and leaves the full report in artifacts/lighthouse/. Not part of
# the tests: `make lighthouse`.
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

URL="http://127.0.0.1:$PORT/r/training-v5.1/"
# Scores swing with the machine's load (a shared 2-core machine: blocking time doubles under load), so it
# runs RUNS times and reports each run and the median.
RUNS=${LIGHTHOUSE_RUNS:-3}
# A run is tried twice: on a fresh machine Lighthouse once lost the trace of its first page load
# (NO_NAVSTART, "please run Lighthouse again"), and the same run then passed.
for n in $(seq "$RUNS"); do
  for attempt in 1 2; do
    if bench/lighthouse/node_modules/.bin/lighthouse "$URL" --quiet \
      --only-categories=performance,accessibility,best-practices \
      --chrome-flags="--headless=new --no-sandbox --disable-dev-shm-usage" \
      --output=json --output=html --output-path="$OUT/round-v5.1-$n"; then
      break
    fi
    [ "$attempt" = 2 ] && exit 1
  done
done

$PY - "$OUT" "$RUNS" <<'EOF'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
reports = [json.load(open(f"{out}/round-v5.1-{n}.report.json")) for n in range(1, runs + 1)]
first = reports[0]
chromium = first["environment"]["hostUserAgent"].split("Chrome/")[-1].split()[0]
print(f"lighthouse {first['lighthouseVersion']} on {first['finalDisplayedUrl']} (chromium {chromium}), {runs} runs")
targets = {"performance": 95, "accessibility": 100, "best-practices": 100}
for key in first["categories"]:
    scores = [round(r["categories"][key]["score"] * 100) for r in reports]
    median = statistics.median(scores)
    target = targets.get(key, 90)
    verdict = "met" if median >= target else "NOT met"
    print(f"  {key}: median {median:g} (runs: {', '.join(map(str, scores))}; target {target}: {verdict})")
for key in ("first-contentful-paint", "largest-contentful-paint", "total-blocking-time", "speed-index"):
    values = [r["audits"][key]["numericValue"] for r in reports]
    print(f"  {first['audits'][key]['title']}: median {statistics.median(values):,.0f} ms")
shift = statistics.median(r["audits"]["cumulative-layout-shift"]["numericValue"] for r in reports)
print(f"  Cumulative Layout Shift: median {shift:.3f}")
failed = {a["title"] for r in reports for a in r["audits"].values()
          if a.get("score") == 0 and a.get("scoreDisplayMode") == "binary"}
if failed:
    print("  failing audits: " + "; ".join(sorted(failed)))
EOF
