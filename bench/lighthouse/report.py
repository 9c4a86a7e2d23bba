"""The figures of `make lighthouse` (bench/lighthouse.sh): reads OUT/<kind>-<n>.report.json for each page
kind named and each run, prints each category's median per page against its target (issue 39, mobile:
performance 95, accessibility 100, best practices 100, SEO 95) with the runs, the timings behind
performance and the audits that failed, and exits 1 when a page misses a target.

usage: report.py OUT RUNS KIND...
"""

import json
import os
import statistics
import sys

TARGETS = {"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 95}
TIMINGS = (
    "first-contentful-paint",
    "largest-contentful-paint",
    "total-blocking-time",
    "speed-index",
)


def main(out: str, runs: int, kinds: list[str]) -> int:
    missed = []
    for kind in kinds:
        reports = [json.load(open(f"{out}/{kind}-{n}.report.json")) for n in range(1, runs + 1)]
        first = reports[0]
        print(f"{kind}: {first['finalDisplayedUrl']}")
        for key, target in TARGETS.items():
            scores = [round(r["categories"][key]["score"] * 100) for r in reports]
            median = statistics.median(scores)
            verdict = "met" if median >= target else "NOT met"
            if median < target:
                missed.append(f"{kind} {key} {median:g} < {target}")
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
        f"lighthouse {first['lighthouseVersion']} (chromium {chromium}, mobile), {runs} run(s) a page"
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
    sys.exit(main(sys.argv[1], int(sys.argv[2]), sys.argv[3:]))
