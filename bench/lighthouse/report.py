"""The figures of `make lighthouse` (bench/lighthouse.sh): reads OUT/<kind>-<n>.report.json for each page
kind named and each of its runs (one, or more where the first missed a target), prints each category's median per page against its target (issue 39, mobile:
performance 95, accessibility 100, best practices 100, SEO 95) with the runs, the timings behind
performance and the audits that failed, and exits 1 when a page misses a target.

usage: report.py OUT KIND...
       report.py --missed OUT KIND   (exit 1 when the page's runs so far miss a target; prints nothing)
"""

import json
import os
import statistics
import sys
from pathlib import Path

TARGETS = {"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 95}
TIMINGS = (
    "first-contentful-paint",
    "largest-contentful-paint",
    "total-blocking-time",
    "speed-index",
)


def runs_of(out: str, kind: str) -> list[dict]:
    """The page's reports, in the order run."""
    paths = Path(out).glob(f"{kind}-*.report.json")
    ordered = sorted(
        paths, key=lambda p: int(p.name.removesuffix(".report.json").rsplit("-", 1)[1])
    )
    return [json.loads(p.read_text()) for p in ordered]


def misses(reports: list[dict]) -> list[str]:
    """The categories whose median over the runs is under its target."""
    medians = {
        key: statistics.median(round(r["categories"][key]["score"] * 100) for r in reports)
        for key in TARGETS
    }
    return [
        f"{key} {medians[key]:g} < {TARGETS[key]}" for key in TARGETS if medians[key] < TARGETS[key]
    ]


def main(out: str, kinds: list[str]) -> int:
    missed = []
    runs = set()
    for kind in kinds:
        reports = runs_of(out, kind)
        runs.add(len(reports))
        missed += [f"{kind} {miss}" for miss in misses(reports)]
        first = reports[0]
        print(f"{kind}: {first['finalDisplayedUrl']}")
        for key, target in TARGETS.items():
            scores = [round(r["categories"][key]["score"] * 100) for r in reports]
            median = statistics.median(scores)
            verdict = "met" if median >= target else "NOT met"
            runs_text = ", ".join(map(str, scores))
            print(f"  {key}: median {median:g} (runs: {runs_text}; target {target}: {verdict})")
        timings = []
        for key in TIMINGS:
            value = statistics.median(r["audits"][key]["numericValue"] for r in reports)
            timings.append(f"{first['audits'][key]['title']} {value:,.0f} ms")
        shift = statistics.median(
            r["audits"]["cumulative-layout-shift"]["numericValue"] for r in reports
        )
        print(f"  {'; '.join(timings)}; Cumulative Layout Shift {shift:.3f}")
        failed = {
            a["title"]
            for r in reports
            for a in r["audits"].values()
            if a.get("score") == 0 and a.get("scoreDisplayMode") == "binary"
        }
        if failed:
            print("  failing audits: " + "; ".join(sorted(failed)))
    first = json.load(open(f"{out}/{kinds[0]}-1.report.json"))
    chromium = first["environment"]["hostUserAgent"].split("Chrome/")[-1].split()[0]
    print(
        f"lighthouse {first['lighthouseVersion']} (chromium {chromium}, mobile), "
        f"{'-'.join(map(str, sorted(runs)))} run(s) a page (more only where the first missed)"
    )
    # Performance falls with the machine's load (blocking time is CPU time: at load 20 on 2 cores a page
    # without a script scored 85): read the scores with it.
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at the end (1, 5, 15 min): {load} on {os.cpu_count()} cores")
    if missed:
        print("targets missed: " + "; ".join(missed))
        return 1
    print("every target met")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--missed":
        sys.exit(1 if misses(runs_of(sys.argv[2], sys.argv[3])) else 0)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
