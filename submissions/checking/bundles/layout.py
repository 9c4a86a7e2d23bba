"""Finding the submitter root of an unpacked bundle and listing its systems, results and run logs."""

import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field

from leaderboard.catalogue import rule_catalogue

from ..budget import is_stop
from ..logs.power import kind_of
from ..rules import bundle as findings
from ..systems import MAX_NESTING, expand_literals, nested_deeper
from .files import FolderFiles, TarFiles
from .runlogs import (
    RESULT_FILE,
    SUMMARIZER_RUN_FILE,
    declared_benchmark,
    holds_log_lines,
    run_indices,
)

JUNK = {".DS_Store", ".gitkeep", ".gitignore", "Thumbs.db", "desktop.ini"}
JUNK_DIRS = {"__MACOSX", ".git"}
DESCRIPTIONS = {
    "entry.json",
    "submission.json",
    "scaling.json",
}  # files of the layout, never run logs
ROUND_FOLDER = re.compile(r"^(training_results_)?v?\d+(\.\d+)+$")  # v0.5.0 above the submitters
# The largest description, submission.json or scaling.json read (published ones: 2.3 KiB at most); a larger one is
# not read whole into memory, and is a finding.
MAX_JSON_BYTES = 1 << 20
# The longest name the tables keep for a system (its key) and a submitter: a longer one is refused, not cut,
# since a cut name could be another system's.
MAX_NAME_CHARS = 200
EXPECTED = (
    "Expected <Submitter>/results/<system>/<benchmark>/result_N.txt with <Submitter>/systems/<system>.json "
    "(v0.6 and later), or for v0.5 <submitter>/<entry>/results/<system>/<benchmark>/result_N.txt with "
    "entry.json in <system>/ and submission.json in <entry>/."
)


@dataclass
class SystemEntry:
    name: str
    description: dict
    description_path: str | None
    description_format: str  # "entry.json" or "system.json"


@dataclass
class ResultEntry:
    system: str
    benchmark: str
    path: str  # the benchmark folder; the system folder for logs put there
    run_files: list[str]  # in run order
    extra_files: list[str]
    run_indices: list[int] = field(default_factory=list)  # N of each run, as result_N.txt names it
    misplaced: list[str] = field(
        default_factory=list
    )  # runs not named or placed as <log_folder>/result_N.txt
    log_folder: str = ""  # where the rules put its logs: <system folder>/<benchmark>
    no_logs: str = ""  # without runs: why no log was found, in words
    # MLPerf Power: <path>/power/<run log's name>/node_N.txt and sw_N.txt, by the run log's name (no .txt)
    power_files: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self):
        self.log_folder = self.log_folder or self.path
        if not self.run_indices:
            self.run_indices = run_indices([p.rpartition("/")[2] for p in self.run_files])


@dataclass
class Layout:
    kind: str  # "v0.5" or "v0.6+"
    submitter: str
    systems: list[SystemEntry]
    results: list[ResultEntry]
    notes: list[str]
    root: str  # "" when the unpacked folder itself is the submitter root
    problems: list = field(
        default_factory=list
    )  # rules.Finding for files that could not be read (too deep...)


class LayoutError(Exception):
    """No usable submission tree; str(e) says what was expected."""

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


def _parent(rel: str) -> str:
    return rel.rpartition("/")[0]


@dataclass
class _Tree:
    """The bundle's listing, read once: bundle-relative POSIX dir -> (sorted subdirs, sorted files)."""

    bundle: FolderFiles | TarFiles
    dirs: dict = field(default_factory=dict)
    logs: dict = field(default_factory=dict)  # rel -> is_log's answer
    problems: list = field(
        default_factory=list
    )  # rules.Finding, one per file that could not be read

    @classmethod
    def scan(cls, bundle: FolderFiles | TarFiles) -> "_Tree":
        listing = bundle.walk()
        dirs = {}
        for rel, (subdirs, names) in listing.items():
            if not JUNK_DIRS.intersection(rel.split("/")):
                dirs[rel] = ([d for d in subdirs if d not in JUNK_DIRS], names)
        return cls(bundle, dirs)

    def subdirs(self, rel: str) -> list[str]:
        return self.dirs.get(rel, ([], []))[0]

    def files(self, rel: str) -> list[str]:
        return self.dirs.get(rel, ([], []))[1]

    def has_file(self, rel: str, name: str) -> bool:
        return name in self.files(rel)

    def is_log(self, rel: str) -> bool:
        """A file not named result_N.txt that holds MLPerf log lines (looked at once, however often asked)."""
        if rel not in self.logs:
            name = rel.rpartition("/")[2]
            try:
                self.logs[rel] = not (
                    name in JUNK or name.startswith("._") or name in DESCRIPTIONS
                ) and holds_log_lines(self.bundle.file(rel))
            except OSError:
                self.logs[rel] = False
            except (
                Exception
            ) as e:  # a fault of ours: this file is not taken as a log, the others are read
                self.problems.append(findings.read_crashed(rel, e))
                self.logs[rel] = False
        return self.logs[rel]


def _read_json(tree: _Tree, rel: str, notes: list[str]) -> tuple[dict, object]:
    """The parsed object (or {}) and a signature to compare descriptions by."""
    try:
        raw = tree.bundle.read_bytes(rel, MAX_JSON_BYTES)
    except OSError as e:
        notes.append(f"{rel}: not readable ({e}); its contents are ignored.")
        return {}, ("unreadable", rel)
    try:
        return read_description(raw, rel, notes, tree.problems)
    except Exception as e:  # a fault of ours: the file counts as absent, and the report says why
        if is_stop(e):  # out of memory: the step's budget says so
            raise
        tree.problems.append(findings.read_crashed(rel, e))
        return {}, ("unreadable", rel)


def read_description(
    raw: bytes, rel: str, notes: list[str], problems: list | None = None
) -> tuple[dict, object]:
    """A description file's bytes as _read_json reads them: JSON, else NVIDIA's v0.6 log lines. `problems`
    gets a rules.Finding for a file larger than MAX_JSON_BYTES, nested more than MAX_NESTING levels deep or
    holding a number json refuses; such a file is read as {}."""
    problems = [] if problems is None else problems
    if len(raw) > MAX_JSON_BYTES:
        notes.append(f"{rel}: larger than {MAX_JSON_BYTES // 1024:,} KiB; it is ignored.")
        problems.append(findings.json_too_large(rel, MAX_JSON_BYTES))
        return {}, ("unreadable", rel)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        notes.append(f"{rel}: not readable ({e}); its contents are ignored.")
        return {}, ("unreadable", rel)
    dupes = []

    def pairs(items):
        keys = [k for k, _ in items]
        dupes.extend(k for k, n in Counter(keys).items() if n > 1)
        return dict(items)

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as e:
        return _read_log_lines(text, e, raw, rel, notes, problems)
    except (
        ValueError
    ) as e:  # an integer of more digits than int() reads (sys.get_int_max_str_digits)
        notes.append(f"{rel}: {e}; it is ignored.")
        problems.append(findings.json_number(rel, str(e)))
        return {}, ("unreadable", raw)
    except (RecursionError, MemoryError):
        data = None
    if data is None or nested_deeper(data, MAX_NESTING):
        notes.append(f"{rel}: nested more than {MAX_NESTING} levels deep; it is ignored.")
        problems.append(findings.json_too_deep(rel, MAX_NESTING))
        return {}, ("unreadable", raw)
    if dupes:
        keys = ", ".join(repr(k) for k in sorted(set(dupes)))
        notes.append(f"{rel}: key {keys} appears more than once; the last value is used.")
    if not isinstance(data, dict):
        notes.append(f"{rel}: holds a JSON {type(data).__name__}, not an object; it is ignored.")
        return {}, ("unreadable", raw)
    return data, data


def read_scaling_factor(raw: bytes, rel: str, notes: list[str], problems: list) -> float | None:
    """scaling.json's scaling_factor: a claim, compared later with the factor the portal computes, and kept only
    as a positive finite number. A file nested too deep, or a factor of another kind, is a finding in `problems`;
    a file that is no JSON object with the key is a note."""
    if len(raw) > MAX_JSON_BYTES:
        problems.append(findings.json_too_large(rel, MAX_JSON_BYTES))
        return None
    try:
        data = json.loads(raw)
        too_deep = isinstance(data, (dict, list)) and nested_deeper(data, MAX_NESTING)
    except (RecursionError, MemoryError):
        too_deep = True
    except (
        ValueError
    ) as error:  # not JSON (or not UTF-8), or an integer of more digits than int() reads
        notes.append(f"{rel}: not read ({type(error).__name__}).")
        return None
    if too_deep:
        problems.append(findings.json_too_deep(rel, MAX_NESTING))
        return None
    if not isinstance(data, dict) or "scaling_factor" not in data:
        notes.append(f"{rel}: not read (no scaling_factor).")
        return None
    value = data["scaling_factor"]
    try:
        factor = (
            float(value)
            if isinstance(value, (int, float)) and not isinstance(value, bool)
            else None
        )
    except OverflowError:  # an integer of 400 digits
        factor = None
    if factor is None or not math.isfinite(factor) or factor <= 0:
        problems.append(findings.scaling_factor(rel, value))
        return None
    return factor


def _read_log_lines(
    text: str, error: json.JSONDecodeError, raw: bytes, rel: str, notes: list[str], problems: list
) -> tuple[dict, object]:
    """read_description for a file that is not JSON: NVIDIA's v0.6 log lines, else nothing."""
    lines = text.splitlines()
    line = lines[error.lineno - 1].strip()[:80] if error.lineno <= len(lines) else ""
    try:
        data = _key_value_lines(text)
    except RecursionError:
        notes.append(f"{rel}: nested more than {MAX_NESTING} levels deep; it is ignored.")
        problems.append(findings.json_too_deep(rel, MAX_NESTING))
        return {}, ("unreadable", raw)
    fallback = "read as 'key: {\"value\": ...}' lines instead" if data else "it is ignored"
    notes.append(
        f"{rel}: not valid JSON (line {error.lineno} column {error.colno}: {error.msg}: {line!r}); "
        f"{fallback}."
    )
    unread_literals = []
    data = expand_literals(
        data, unread_literals
    )  # NVIDIA's `entry` value, and `nodes` in it, are Python literals
    notes.extend(f"{rel}: {problem}." for problem in unread_literals)
    return (data, data) if data else ({}, ("unreadable", raw))


def _key_value_lines(text: str) -> dict:
    """NVIDIA's v0.6 systems/*.json are MLPerf log lines `key: {"value": v, ...}`, not JSON; {} for a file that
    is not made of such lines. RecursionError for a line nested more than MAX_NESTING levels deep."""
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        try:
            parsed = json.loads(value) if sep and re.fullmatch(r"\w+", key.strip()) else None
        except ValueError:  # not JSON, or an integer json will not read
            return {}
        if isinstance(parsed, dict) and nested_deeper(parsed, MAX_NESTING):
            raise RecursionError(f"nested more than {MAX_NESTING} levels deep")
        if not isinstance(parsed, dict) or "value" not in parsed:
            return {}
        out[key.strip()] = parsed["value"]
    return out


def _stray(rel: str, notes: list[str]) -> None:
    name = rel.rpartition("/")[2]
    what = "stray file" if name in JUNK or name.startswith("._") else "file not part of the layout"
    notes.append(f"{rel}: {what}; ignored.")


def _junk(tree: _Tree, rel: str, notes: list[str]) -> None:
    """Notes for .DS_Store and the like beside results/ (other files there are code, READMEs: not ours)."""
    for name in tree.files(rel):
        if name in JUNK or name.startswith("._"):
            _stray(_join(rel, name), notes)


def _system_folder(
    tree: _Tree, sys_rel: str, system: str, notes: list[str], describe: bool
) -> list[ResultEntry]:
    """The results in results/<system>/: one per benchmark folder, with or without readable logs, and one per
    benchmark that logs put directly in the system folder name; notes about everything else there."""
    # benchmark, lower case -> [benchmark, path, runs, extra files, misplaced runs, log folder, why no logs]
    results = {}
    power = {}  # benchmark, lower case -> its power files by run
    for bench in tree.subdirs(sys_rel):
        bench_rel = _join(sys_rel, bench)
        runs, extras, misnamed, other = [], [], [], []
        for name in tree.files(bench_rel):
            rel = _join(bench_rel, name)
            if RESULT_FILE.match(name):
                runs.append(rel)
            elif name in JUNK or name.startswith("._"):
                _stray(rel, notes)
            elif tree.is_log(rel) or SUMMARIZER_RUN_FILE.match(name):
                # A result_*.txt without log lines is still a run, a failed one: mlperf-logging's summarizer
                # reads every result_*.txt of the folder and drops the ones it cannot read.
                runs.append(rel)
                misnamed.append(rel)
            else:
                extras.append(rel)
                if name not in DESCRIPTIONS:
                    other.append(name)
        subs = tree.subdirs(bench_rel)
        for sub in subs:
            if sub != POWER_FOLDER:
                notes.append(
                    f"{_join(bench_rel, sub)}/: folder inside a benchmark folder; ignored."
                )
        no_logs = "" if runs else _why_no_logs(tree, bench_rel, other, subs)
        results[bench.lower()] = [bench, bench_rel, runs, extras, misnamed, bench_rel, no_logs]
        power[bench.lower()] = _power_files(tree, bench_rel, notes) if POWER_FOLDER in subs else {}
    for name in tree.files(sys_rel):
        rel = _join(sys_rel, name)
        if describe and name == "entry.json":
            continue
        if not tree.is_log(rel):
            _stray(rel, notes)
            continue
        try:
            bench = declared_benchmark(tree.bundle.file(rel))
        except OSError as e:
            notes.append(f"{rel}: not readable ({e}); ignored.")
            continue
        if bench is None:
            notes.append(
                f"{rel}: MLPerf log lines that name no benchmark (no submission_benchmark); ignored. "
                f"Put the log in {sys_rel}/<benchmark>/result_N.txt."
            )
            continue
        found = results.setdefault(
            bench.lower(), [bench, sys_rel, [], [], [], _join(sys_rel, bench), ""]
        )
        found[2].append(rel)
        found[4].append(rel)
        found[6] = ""
    entries = []
    for key, (bench, path, runs, extras, misplaced, log_folder, no_logs) in results.items():
        numbered = sorted(
            zip(run_indices([p.rpartition("/")[2] for p in runs]), runs)
        )  # in run order: the first count
        entries.append(
            ResultEntry(
                system,
                bench,
                path,
                [p for _, p in numbered],
                extras,
                [n for n, _ in numbered],
                misplaced,
                log_folder,
                no_logs,
                power.get(key, {}),
            )
        )
    return sorted(entries, key=lambda r: r.benchmark)


POWER_FOLDER = "power"


def _power_files(tree: _Tree, bench_rel: str, notes: list[str]) -> dict[str, list[str]]:
    """The power logs in <benchmark>/power/<run>/ (node_N.txt, sw_N.txt), by run folder name; notes for
    anything else there."""
    power_rel = _join(bench_rel, POWER_FOLDER)
    for name in tree.files(power_rel):
        _stray(_join(power_rel, name), notes)
    out = {}
    for run in tree.subdirs(power_rel):
        run_rel = _join(power_rel, run)
        for sub in tree.subdirs(run_rel):
            notes.append(f"{_join(run_rel, sub)}/: folder inside a power folder; ignored.")
        for name in tree.files(run_rel):
            if kind_of(name):
                out.setdefault(run, []).append(_join(run_rel, name))
            else:
                _stray(_join(run_rel, name), notes)
    return out


def _why_no_logs(tree: _Tree, bench_rel: str, other: list[str], subs: list[str]) -> str:
    """Why a benchmark folder gives no run, for a reader."""
    if other:
        listed = ", ".join(other[:5]) + (f" and {len(other) - 5} more" if len(other) > 5 else "")
        return f"none of the files in {bench_rel}/ holds MLPerf log lines ({listed})."
    if subs:
        return (
            f"{bench_rel}/ holds only folders ({', '.join(s + '/' for s in subs[:5])}); logs are read only "
            "directly inside the benchmark folder."
        )
    if tree.files(bench_rel):
        return f"{bench_rel}/ holds only stray files ({', '.join(tree.files(bench_rel)[:5])})."
    return f"the folder {bench_rel}/ is empty."


def _find_anchors(tree: _Tree, notes: list[str]) -> list[str]:
    """Folders holding a results/<system>/<benchmark>/ tree with run logs (or logs directly in a system folder)."""
    anchors, elsewhere = set(), []
    for rel, (_, files) in tree.dirs.items():
        parts = rel.split("/")
        if (
            len(parts) >= 3
            and parts[-3] == "results"
            and (
                any(RESULT_FILE.match(f) for f in files)
                or any(tree.is_log(_join(rel, f)) for f in files)
            )
        ):
            anchors.add("/".join(parts[:-3]))
        elif (
            len(parts) >= 2
            and parts[-2] == "results"
            and any(tree.is_log(_join(rel, f)) for f in files)
        ):
            anchors.add("/".join(parts[:-2]))
        elif any(RESULT_FILE.match(f) for f in files):
            elsewhere.append(rel or ".")
    for rel in sorted(elsewhere):
        notes.append(f"{rel}/: result_N.txt files outside results/<system>/<benchmark>/; ignored.")
    if not anchors:
        found = (
            f" Found result_N.txt only in: {', '.join(sorted(elsewhere)[:5])}." if elsewhere else ""
        )
        raise LayoutError(
            rule_catalogue.LAYOUT_NO_RESULTS,
            f"No run logs (result_N.txt) were found in the bundle.{found} {EXPECTED}",
        )
    return sorted(anchors)


def detect(root: str | os.PathLike | FolderFiles | TarFiles) -> Layout:
    """Work out the layout of a bundle: a folder, or the files open_bundle gave."""
    tree = _Tree.scan(root if isinstance(root, (FolderFiles, TarFiles)) else FolderFiles(root))
    notes: list[str] = []
    anchors = _find_anchors(tree, notes)
    with_systems = [a for a in anchors if "systems" in tree.subdirs(a)]
    if len(anchors) == 1 and (with_systems or not tree.has_file(anchors[0], "submission.json")):
        layout = _v06(tree, anchors[0], notes)
    elif with_systems:
        raise LayoutError(
            rule_catalogue.LAYOUT_MULTIPLE_SUBMITTERS,
            f"The bundle holds several submitters' trees ({', '.join(a or '.' for a in anchors)}). "
            "Upload one bundle per submitter, e.g. `tar -C <round folder> -czf nvidia.tgz NVIDIA`.",
        )
    else:
        layout = _v05(tree, anchors, notes)
    _refuse_long_names(layout)
    layout.problems = tree.problems
    return layout


def _refuse_long_names(layout: Layout) -> None:
    """A system or submitter name longer than the tables keep is refused with the place it comes from."""
    for name in {s.name for s in layout.systems} | {r.system for r in layout.results}:
        if len(name) > MAX_NAME_CHARS:
            log_folder = next((r.log_folder for r in layout.results if r.system == name), "")
            above = log_folder.rpartition("/")[0].rpartition("/")[
                0
            ]  # the folder holding the system's folder
            raise LayoutError(
                rule_catalogue.BUNDLE_NAME_TOO_LONG,
                f"The system '{name[:60]}…' (a folder in {above or '.'}/) has a name of {len(name)} characters; "
                f"the portal keeps system names of up to {MAX_NAME_CHARS}. Rename its folder (and its "
                "systems/<name>.json).",
            )
    if len(layout.submitter) > MAX_NAME_CHARS:
        source = (
            f"its folder {layout.root}/"
            if layout.root.endswith(layout.submitter)
            else "as submission.json or the system descriptions name it"
        )
        raise LayoutError(
            rule_catalogue.BUNDLE_NAME_TOO_LONG,
            f"The submitter's name '{layout.submitter[:60]}…' ({source}) has {len(layout.submitter)} characters; "
            f"the portal keeps names of up to {MAX_NAME_CHARS}. Use the organisation's usual name.",
        )


def _v06(tree: _Tree, top: str, notes: list[str]) -> Layout:
    systems_rel, results_rel = _join(top, "systems"), _join(top, "results")
    described = {}
    for name in tree.files(systems_rel):
        if name.endswith(".json"):
            described[name[:-5]] = _join(systems_rel, name)
        else:
            _stray(_join(systems_rel, name), notes)
    for sub in tree.subdirs(systems_rel):
        notes.append(f"{_join(systems_rel, sub)}/: folder inside systems/; ignored.")
    for name in tree.files(results_rel):
        _stray(_join(results_rel, name), notes)
    _junk(tree, top, notes)

    systems, results = [], []
    for name in sorted(set(described) | set(tree.subdirs(results_rel))):
        sys_rel = _join(results_rel, name)
        entry_json = name not in described and tree.has_file(sys_rel, "entry.json")
        found = _system_folder(tree, sys_rel, name, notes, describe=entry_json)
        results += found
        if not found:  # noted, not listed: a system without results would only be an empty row
            if name in described or entry_json:
                notes.append(
                    f"{described.get(name) or sys_rel + '/entry.json'}: system has no results "
                    f"(no {sys_rel}/<benchmark>/result_N.txt); not listed."
                )
            elif name in tree.dirs:
                notes.append(f"{sys_rel}/: neither a description nor result logs; ignored.")
            continue
        if name in described:
            desc, _ = _read_json(tree, described[name], notes)
            systems.append(SystemEntry(name, desc, described[name], "system.json"))
        elif entry_json:  # Alibaba v0.6: a v0.5-style description beside the results
            path = _join(sys_rel, "entry.json")
            desc, _ = _read_json(tree, path, notes)
            systems.append(SystemEntry(name, desc, path, "entry.json"))
        else:
            notes.append(f"{sys_rel}/: no description (expected {systems_rel}/{name}.json).")
            systems.append(SystemEntry(name, {}, None, "system.json"))

    submitter = top.rpartition("/")[2]
    if not submitter:  # the folder's contents were packed: ask the descriptions
        named = Counter(
            s.description.get("submitter")
            for s in systems
            if isinstance(s.description.get("submitter"), str)
        )
        submitter = named.most_common(1)[0][0] if named else tree.bundle.name
        notes.append(
            f"The bundle has no submitter folder at its top; the submitter is taken to be '{submitter}'."
        )
    return Layout("v0.6+", submitter, systems, results, notes, top)


@dataclass
class _Candidate:
    entry: str  # the v0.5 entry folder (above results/), relative to the submitter root
    folder: str  # the system folder name under results/
    description: dict
    description_path: str | None
    signature: object  # what equal descriptions compare equal by
    results: list


def _v05_names(cands: list[_Candidate]) -> dict[int, str]:
    """System names: the folder name when unambiguous, else the folder holding the entry, else the entry path."""

    def alone(c):  # a name that no other candidate can have
        return _join(c.entry, c.folder) if "/" not in c.entry else c.entry

    def same(
        group,
    ):  # one system: described alike, and no benchmark twice (Intel's public and private MiniGo)
        benchmarks = [r.benchmark.lower() for c in group for r in c.results]
        return all(c.signature == group[0].signature for c in group) and len(benchmarks) == len(
            set(benchmarks)
        )

    groups = []  # (name, candidates that share it)
    by_folder = {}
    for c in cands:
        by_folder.setdefault(c.folder, []).append(c)
    for folder, group in by_folder.items():
        if same(group):
            groups.append((folder, group))
            continue
        by_holder = {}
        for c in group:
            by_holder.setdefault(_parent(c.entry) or alone(c), []).append(c)
        for holder, sub in by_holder.items():
            groups += [(holder, sub)] if same(sub) else [(alone(c), [c]) for c in sub]
    taken = Counter(name for name, _ in groups)
    names = {}
    for name, group in groups:
        for c in group:  # a name two groups arrived at independently is no name: fall back
            names[id(c)] = name if taken[name] == 1 else alone(c)
    return names


def _v05(tree: _Tree, entries: list[str], notes: list[str]) -> Layout:
    common = os.path.commonpath(entries) if all(entries) else ""
    parts = common.split("/") if common else []
    skip = 0
    while skip < len(parts) and ROUND_FOLDER.match(parts[skip]):
        skip += 1
    top = "/".join(parts[: skip + 1]) if skip < len(parts) else common
    # Entries whose logs are all missing (Intel's v0.5 MiniGo) still describe systems.
    entries = sorted(
        set(entries)
        | {
            rel
            for rel, (subdirs, files) in tree.dirs.items()
            if "results" in subdirs
            and "submission.json" in files
            and (not top or rel == top or rel.startswith(top + "/"))
        }
    )

    orgs, cands = {}, []
    for entry in entries:
        if tree.has_file(entry, "submission.json"):
            sub, _ = _read_json(tree, _join(entry, "submission.json"), notes)
            if isinstance(sub.get("org"), str) and sub["org"].strip():
                orgs[entry] = sub["org"].strip()
        else:
            notes.append(f"{entry or '.'}/: no submission.json beside results/.")
        _junk(tree, entry, notes)
        results_rel = _join(entry, "results")
        for name in tree.files(results_rel):
            _stray(_join(results_rel, name), notes)
        for folder in tree.subdirs(results_rel):
            sys_rel = _join(results_rel, folder)
            has_entry = tree.has_file(sys_rel, "entry.json")
            found = _system_folder(tree, sys_rel, folder, notes, describe=has_entry)
            if not found:  # noted, not listed: a system without results would only be an empty row
                what = (
                    "entry.json: system has no results (no <benchmark>/result_N.txt); not listed"
                    if has_entry
                    else ": neither entry.json nor result logs; ignored"
                )
                notes.append(f"{sys_rel}/{what}.")
                continue
            if has_entry:
                desc, sig = _read_json(tree, _join(sys_rel, "entry.json"), notes)
            else:
                notes.append(f"{sys_rel}/: no entry.json describing the system.")
                desc, sig = {}, ("missing", sys_rel)
            rel_entry = entry[len(top) :].lstrip("/")
            desc_path = _join(sys_rel, "entry.json") if has_entry else None
            cands.append(_Candidate(rel_entry, folder, desc, desc_path, sig, found))

    _refuse_several_orgs(top, entries, orgs)
    names = _v05_names(cands)
    systems, results, seen = [], [], set()
    for c in cands:
        name = names[id(c)]
        if name not in seen:
            seen.add(name)
            systems.append(SystemEntry(name, c.description, c.description_path, "entry.json"))
        for r in c.results:
            r.system = name
            results.append(r)

    counted = Counter(orgs[e] for e in entries if e in orgs)
    if counted:
        submitter = counted.most_common(1)[0][0]
        if len(counted) > 1:
            listed = ", ".join(f"'{o}' ({n})" for o, n in counted.most_common())
            notes.append(
                f"submission.json files name different organisations: {listed}; using '{submitter}'."
            )
    else:
        submitter = top.rpartition("/")[2] or tree.bundle.name
    systems.sort(key=lambda s: s.name)
    results.sort(key=lambda r: (r.system, r.benchmark, r.path))
    return Layout("v0.5", submitter, systems, results, notes, top)


def _refuse_several_orgs(top: str, entries: list[str], orgs: dict) -> None:
    """Folders side by side under the root whose submission.json name different organisations are several submitters."""
    by_child = {}
    for e in entries:
        child = e[len(top) :].lstrip("/").split("/")[0]
        word = re.findall(r"[a-z0-9]+", orgs.get(e, "").lower())
        by_child.setdefault(child, set()).add(word[0] if word else None)
    if len(by_child) < 2 or any(None in w or len(w) != 1 for w in by_child.values()):
        return
    if len({next(iter(w)) for w in by_child.values()}) == len(by_child):
        raise LayoutError(
            rule_catalogue.LAYOUT_MULTIPLE_SUBMITTERS,
            f"The bundle holds several submitters' trees ({', '.join(_join(top, c) for c in sorted(by_child))}). "
            "Upload one bundle per submitter, e.g. `tar -C v0.5.0 -czf nvidia.tgz nvidia`.",
        )
