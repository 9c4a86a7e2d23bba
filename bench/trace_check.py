"""Trace one run's check through the code: which modules it enters, in order, and how often control
comes back to the module that runs the check (issue 35, item 1: a line, not a star).

    .venv/bin/python bench/trace_check.py

Checks one generated v5.1 RGAT log (tests/mllogs.py) with check_run under sys.setprofile and prints the
sequence of project modules entered (consecutive calls within one module folded into one visit), the
number of distinct modules, the visits, and the returns to check_run's own module. No Django needed:
the check of a run is pure domain code.
"""

import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from submissions.checking.rules import RunContext, check_run  # noqa: E402
from tests.mllogs import REL, V51_KEYS, generated_rgat_log, write  # noqa: E402


def project_module(filename: str) -> str | None:
    path = Path(filename)
    try:
        rel = path.resolve().relative_to(ROOT)
    except ValueError:
        return None
    if rel.parts[0] in ("tests", "bench") or rel.suffix != ".py":
        return None
    return ".".join(rel.with_suffix("").parts)


def trace(log_path) -> list[str]:
    """The modules the check enters and returns to, in order, one entry per change of module; where
    check_run is a declared pipeline (rules/run.py's STEPS), a "[step] name" entry where each step begins."""
    steps = getattr(sys.modules[check_run.__module__], "STEPS", ())
    step_names = {getattr(s.run, "__code__", None): s.name for s in steps}
    visits: list[str] = []
    current: list[str] = []  # the module control is in, so a step marker does not hide a change

    def enter(module: str | None) -> None:
        if module is not None and (not current or current[-1] != module):
            current.append(module)
            visits.append(module)

    def profile(frame, event, arg):
        if event == "call":
            if frame.f_code in step_names:
                visits.append(f"[step] {step_names[frame.f_code]}")
            enter(project_module(frame.f_code.co_filename))
        elif event == "return" and frame.f_back is not None:
            enter(project_module(frame.f_back.f_code.co_filename))  # back in the caller's module

    ctx = RunContext(
        ruleset="5.1.0", benchmark="rgat", benchmark_keys=V51_KEYS, quality_target=0.72
    )
    sys.setprofile(profile)
    try:
        check_run(log_path, REL, ctx)
    finally:
        sys.setprofile(None)
    return visits


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        trail = trace(write(Path(tmp), generated_rgat_log()))
    home = check_run.__module__
    print("visits, in order (a step of the declared pipeline begins at each [step] line):")
    for entry in trail:
        print("  " + entry)
    visits = [v for v in trail if not v.startswith("[step]")]
    counts = Counter(visits)
    print(f"distinct modules: {len(counts)}")
    print(f"visits (changes of module): {len(visits)}")
    print(f"returns to {home}: {counts[home] - 1}")
    print("most visited:", ", ".join(f"{m} {n}" for m, n in counts.most_common(5)))
    steps = [v[len("[step] ") :] for v in trail if v.startswith("[step]")]
    if steps:
        print(f"steps run: {len(steps)}, each once and in order: {len(set(steps)) == len(steps)}")
        print("visits per step:")
        at = [i for i, v in enumerate(trail) if v.startswith("[step]")] + [len(trail)]
        for name, begin, end in zip(steps, at, at[1:], strict=False):
            inside = trail[begin + 1 : end]
            print(f"  {name}: {len(inside)} visits, {len(set(inside))} modules")


if __name__ == "__main__":
    main()
