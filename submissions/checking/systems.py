"""Reading a system description (v0.5 entry.json, v0.6+ systems/*.json, NVIDIA's v0.6 log lines) into table fields."""

import ast
import json
import math
import re
from typing import NamedTuple

from leaderboard.catalogue import rule_catalogue

CATEGORY_WORDS = [
    ("cloud", "cloud"),
    ("prem", "onprem"),
    ("preview", "preview"),
    ("research", "research"),
    ("rdi", "research"),
    ("internal", "research"),
    # A bare "available" (48 systems of v1.0 and v4.0): MLCommons' summary reads it as on-premise
    # (mlperf-logging's result_summarizer/config.yaml maps "available" to "Available on-premise").
    ("available", "onprem"),
]
# Bounds on a literal written as text, so that a hostile description costs little and cannot exhaust the stack.
MAX_LITERAL_CHARS = 64 * 1024
MAX_BRACKETS = 32  # nesting of ( [ { within one literal
MAX_DEPTH = 8  # literals within literals, and levels a description is walked
MAX_NESTING = (
    16  # levels of a description file's JSON (published ones have 3): deeper is refused, not stored
)
# A count (nodes, accelerators or processors, per node or in all) above this is no real system: the largest
# published ones have tens of thousands of accelerators. It also keeps the System table's integers in range.
MAX_COUNT = 1_000_000
_DIGITS = (
    9  # digits read of a count written in text: more are beyond MAX_COUNT (and cost int() nothing)
)
# The System table's text columns (leaderboard.models.System): longer values are cut, and the check says so.
FIELD_CHARS = {
    "name": 300,
    "published_submitter": 300,
    "accelerator_model": 200,
    "processor_model": 200,
    "framework": 300,
    "interconnect": 300,
}
NO_VALUE = {"", "na", "n/a", "none", "-", "null", "not applicable"}
# Spellings seen in published descriptions -> the schema's.
ALIASES = {
    "sumitter": "submitter",
    "accelerator_per_node": "accelerators_per_node",
    "host_processor_per_node": "host_processors_per_node",
    "host_processors_model_name": "host_processor_model_name",
    "number_of_node": "number_of_nodes",
}


class LiteralError(ValueError):
    """A value written as a literal that cannot be read; str(e) says why."""


def _bracket_depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    return deepest


def nested_deeper(value, limit: int) -> bool:
    """Whether dicts and lists in `value` nest more than `limit` levels (walked without recursion)."""
    level = [value]
    for _ in range(limit + 1):
        level = [
            v
            for item in level
            if isinstance(item, (dict, list))
            for v in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return False
    return True


def _plain(value, depth: int = 0):
    """What literal_eval gave, as JSON can store it: tuples and sets become lists, other objects text."""
    if depth > MAX_DEPTH:
        raise LiteralError(f"nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v, depth + 1) for v in value), key=str)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def read_literal(text: str):
    """A dict or list written as JSON or as a Python literal ("{'num_nodes': '96'}"): read with json or
    ast.literal_eval (which evaluates nothing), within the bounds above. Raises LiteralError saying why not."""
    text = text.strip()
    if len(text) > MAX_LITERAL_CHARS:
        raise LiteralError(f"longer than {MAX_LITERAL_CHARS} characters")
    if _bracket_depth(text) > MAX_BRACKETS:
        raise LiteralError(f"brackets nested more than {MAX_BRACKETS} deep")
    try:
        return _plain(json.loads(text))
    except (ValueError, RecursionError):
        pass
    try:
        return _plain(ast.literal_eval(text))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as e:
        reason = str(e).split("\n")[0] or type(e).__name__
        raise LiteralError(f"not a JSON or Python literal ({reason})") from None


def _looks_literal(text: str) -> bool:
    text = text.strip()
    return len(text) >= 2 and (text[0], text[-1]) in {("{", "}"), ("[", "]")}


def expand_literals(value, problems: list[str] | None = None, where: str = "", depth: int = 0):
    """The description with every text value that holds a dict or list (NVIDIA's v0.6 `entry`, and `nodes`
    inside it) replaced by what it holds. A value that cannot be read stays text, and `problems` says why."""
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {
            k: expand_literals(v, problems, f"{where}.{k}" if where else str(k), depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [
            expand_literals(v, problems, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)
        ]
    if isinstance(value, str) and _looks_literal(value):
        try:
            parsed = read_literal(value)
        except LiteralError as e:
            if problems is not None:
                problems.append(f"'{where}' is {e}; kept as text")
            return value
        return expand_literals(parsed, problems, where, depth + 1)
    return value


def category_of(status: str) -> str:
    """Map a submission status as written ('Available cloud', 'on-prem', 'RDI', ...) to a category key; a status
    that is no text (a list, a number: a description read from JSON may hold anything) is "unknown"."""
    text = status.lower() if isinstance(status, str) else ""
    for word, category in CATEGORY_WORDS:
        if word in text:
            return category
    return "unknown"


def division_of(text: str) -> str:
    return "open" if isinstance(text, str) and "open" in text.lower() else "closed"


def read_count(value) -> tuple[int | None, str]:
    """(count, "") for a count as descriptions write it: 8, 8.0, '8', ' 16 ', '2x'; (None, "") where none is
    given ('', 'N/A', null); (None, why) for a value that is no count: not finite, negative, fractional, above
    MAX_COUNT, true or false, a list or a table, or text without a number."""
    if value is None:
        return None, ""
    if isinstance(value, bool) or isinstance(value, (dict, list)):
        return None, f"a {type(value).__name__}, not a count"
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in NO_VALUE:
            return None, ""
        if (
            len(text) <= 64
        ):  # a number written as text ('8', '8.0', '-1', 'NaN', '1e300'), read as one
            try:
                value = float(text) if not text.isdigit() else int(text)
            except ValueError:
                pass
        if isinstance(value, str):
            match = re.match(r"(\d+)", text)  # '2x', '8 GPUs'
            if not match:
                return None, "no number"
            if len(match.group(1)) > _DIGITS:
                return None, f"more than {MAX_COUNT:,}"
            value = int(match.group(1))
    if isinstance(value, float):
        if not math.isfinite(value):
            return None, "not a finite number"
        if value != int(value):
            return None, "not a whole number"
        value = int(value)
    if not isinstance(value, int):
        return None, f"a {type(value).__name__}, not a count"
    if value < 0:
        return None, "negative"
    if value > MAX_COUNT:
        return None, f"more than {MAX_COUNT:,}"
    return value, ""


def to_int(value) -> int | None:
    """'8', 8, '2x', ' 16 ' -> int; '-', '', 'N/A', and whatever is no count (see read_count) -> None."""
    return read_count(value)[0]


def _text(value) -> str:
    """A text field as written; 'NA', 'none', '-' and the like say there is none."""
    if value is None or isinstance(value, (dict, list)):
        return ""
    text = str(value).strip()
    return "" if text.lower() in NO_VALUE else text


def _as_written(value) -> str:
    """A text field that MLCommons' summary shows as the description writes it (mlperf-logging's
    result_summarizer copies it): v1.0 Intel's CPU-only systems write accelerator_model_name "N/A", and MLCommons
    shows N/A, not a blank."""
    if value is None or isinstance(value, (dict, list)):
        return ""
    return str(value).strip()


def _leading_count(text: str) -> tuple[int | None, str]:
    """'2x Intel Xeon' -> (2, 'Intel Xeon')."""
    match = re.match(rf"\s*(\d{{1,{_DIGITS}}})\s*[xX×]\s*(.+)", text or "")
    if match:
        return int(match.group(1)), match.group(2).strip()
    return None, (text or "").strip()


class Problem(NamedTuple):
    """A value of a description the table cannot take as it is written."""

    rule: str  # rule_catalogue.SYSTEM_NUMBER or SYSTEM_LONG_TEXT
    where: str  # the key as the file spells it ("number_of_nodes", "nodes[1].num_accelerators"), or the field's
    value: object
    why: str


def _count(table: dict, key: str, problems: list | None, where: str = "") -> int | None:
    """The count `table[key]`, or None; a value that is no count is a Problem."""
    count, why = read_count(table.get(key))
    if why and problems is not None:
        problems.append(Problem(rule_catalogue.SYSTEM_NUMBER, where + key, table.get(key), why))
    return count


def _total(count: int | None, what: str, problems: list | None) -> int | None:
    """A count made of others (nodes x per node, a sum of node groups), if it is within MAX_COUNT."""
    if count is None or count <= MAX_COUNT:
        return count
    if problems is not None:
        problems.append(
            Problem(rule_catalogue.SYSTEM_NUMBER, what, count, f"more than {MAX_COUNT:,}")
        )
    return None


def _times(a, b):
    return a * b if a is not None and b is not None else None


def _as_schema_spells(desc: dict) -> dict:
    """The description's keys as the schemas spell them, whatever their case and separators (Intel's v0.6 files
    say "number of nodes") and for the misspellings in ALIASES."""
    out = {}
    for key, value in desc.items():
        spelled = re.sub(r"[\s-]+", "_", str(key).strip().lower())
        out.setdefault(ALIASES.get(spelled, spelled), value)
    return out


def _node_groups(desc: dict) -> list[dict]:
    """entry.json's node groups: a list, or one group written as a single table (NVIDIA's v0.6 `nodes`)."""
    nodes = desc.get("nodes")
    nodes = [nodes] if isinstance(nodes, dict) else nodes if isinstance(nodes, list) else []
    return [_as_schema_spells(n) for n in nodes if isinstance(n, dict)]


def _group_accelerators(group: dict, i: int, problems: list | None) -> int | None:
    """The accelerators of one entry.json node group: num_accelerators per node (NVIDIA's 128 DGX-1 with 8),
    but the group's total when the accelerator is named by that count: Google's "tpuv2-512" pod slice with
    num_accelerators 512 runs on 64 hosts (num_nodes), not 64 x 512."""
    count = _count(group, "num_accelerators", problems, f"nodes[{i}].")
    if count is None:
        return None
    if str(group.get("accelerator") or "").strip().endswith(f"-{count}"):
        return count
    return (_count(group, "num_nodes", problems, f"nodes[{i}].") or 1) * count


def _processors_per_node(cpu: str, hardware: str) -> tuple[int, str]:
    """(per node, model) from a node group's cpu ('2x Intel Xeon ...'), else from a hardware line that counts
    the same processor ('8-nodes 2x Intel(R) Xeon(R) Platinum 8180 processor', Intel v0.5), else one."""
    per_node, model = _leading_count(cpu)
    if per_node is None and model:
        first = " ".join(model.split()[:2]).lower()
        for match in re.finditer(rf"(\d{{1,{_DIGITS}}})\s*[xX×]\s*(\S+\s+\S+)", hardware or ""):
            if match.group(2).lower() == first:
                per_node = int(match.group(1))
                break
    return per_node or 1, model


def from_entry_json(desc: dict, problems: list | None = None) -> dict:
    """v0.5-style entry.json: top-level division/status/framework and a list of node groups."""
    desc = _as_schema_spells(desc)
    groups = list(enumerate(_node_groups(desc), start=1))
    node_count = (
        sum(_count(n, "num_nodes", problems, f"nodes[{i}].") or 0 for i, n in groups) or None
    )
    stated = [c for c in (_group_accelerators(n, i, problems) for i, n in groups) if c is not None]
    hardware = _text(desc.get("hardware"))
    processors, processor_model = None, ""
    for i, group in groups:
        per_node, model = _processors_per_node(_text(group.get("cpu")), hardware)
        if model:
            processor_model = processor_model or model
            processors = (processors or 0) + per_node * (
                _count(group, "num_nodes", problems, f"nodes[{i}].") or 1
            )
    accelerator_model = next((m for m in (_text(n.get("accelerator")) for _, n in groups) if m), "")
    return {
        "name": _text(desc.get("platform")) or hardware,
        "published_submitter": _text(desc.get("submitter")),
        "division": division_of(desc.get("division", "")),
        "category": category_of(desc.get("status", "")),
        "accelerator_model": accelerator_model,
        "accelerator_count": _total(
            sum(stated) if stated else None, "accelerators (all node groups)", problems
        ),
        "processor_model": processor_model,
        "processor_count": _total(processors, "host processors (all node groups)", problems),
        "nodes": _total(node_count, "nodes (all node groups)", problems),
        "framework": _text(desc.get("framework")),
        "interconnect": _text(desc.get("interconnect")),
    }


def from_system_json(desc: dict, problems: list | None = None) -> dict:
    """v0.6+ systems/<name>.json: flat keys, counts as strings."""
    desc = _as_schema_spells(desc)
    nodes = _count(desc, "number_of_nodes", problems)
    accelerators = _times(nodes, _count(desc, "accelerators_per_node", problems))
    processors = _times(nodes, _count(desc, "host_processors_per_node", problems))
    return {
        "name": _text(desc.get("system_name")),
        "published_submitter": _text(desc.get("submitter")),
        "division": division_of(desc.get("division", "")),
        "category": category_of(desc.get("status", "")),
        "accelerator_model": _as_written(desc.get("accelerator_model_name")),
        "accelerator_count": _total(
            accelerators, "accelerators (number_of_nodes × accelerators_per_node)", problems
        ),
        "processor_model": _as_written(desc.get("host_processor_model_name")),
        "processor_count": _total(
            processors, "host processors (number_of_nodes × host_processors_per_node)", problems
        ),
        "nodes": nodes,
        "framework": _as_written(desc.get("framework")) or _text(desc.get("framework_name")),
        "interconnect": _text(desc.get("accelerator_interconnect"))
        or _text(desc.get("interconnect"))
        or _text(desc.get("host_networking")),
    }


def _with_entry(desc: dict) -> dict:
    """NVIDIA's v0.6 log lines put entry.json's fields in one `entry` record beside org, division, status and
    platform: one table of both."""
    entry = desc.get("entry")
    if not isinstance(entry, dict):
        return desc
    return {**{k: v for k, v in desc.items() if k != "entry"}, **entry}


def fields_of(description: dict, description_format: str, problems: list | None = None) -> dict:
    """The table's fields, read by the file's kind or by its shape: a systems/*.json written as an entry.json
    (node groups, no number_of_nodes: Fujitsu's v0.6 ABCI, NVIDIA's v0.6 log lines) is read as one. A field the
    file's own schema leaves blank is taken from the other schema's keys where the file has them too (Intel's
    v0.6 files state their accelerators only in a `nodes` list). The rules still judge the file by its kind
    (rules.check_system): this only fills the table's fields.

    Every count is None or within 0..MAX_COUNT and every text within FIELD_CHARS; `problems`, when given, gets
    a Problem for each value read otherwise than it is written (see value_problems)."""
    found: list[Problem] = []
    desc = _with_entry(expand_literals(description)) if isinstance(description, dict) else {}
    spelled = _as_schema_spells(desc)
    has_groups = bool(_node_groups(spelled))
    as_entry = description_format == "entry.json" or (
        has_groups and "number_of_nodes" not in spelled
    )
    fields = from_entry_json(desc, found) if as_entry else from_system_json(desc, found)
    other = (
        from_system_json(desc, found)
        if as_entry
        else from_entry_json(desc, found)
        if has_groups
        else {}
    )
    for key, value in other.items():
        if fields[key] in ("", None):
            fields[key] = value
    for key, limit in FIELD_CHARS.items():
        if len(fields[key]) > limit:
            found.append(
                Problem(
                    rule_catalogue.SYSTEM_LONG_TEXT,
                    key,
                    fields[key],
                    f"{len(fields[key]):,} characters long",
                )
            )
            fields[key] = fields[key][: limit - 1] + "…"
    if problems is not None:  # each value once, though both schemas' readings may have read it
        seen = set()
        for problem in found:
            if (problem.rule, problem.where) not in seen:
                seen.add((problem.rule, problem.where))
                problems.append(problem)
    return fields


def value_problems(description: dict, description_format: str) -> list[Problem]:
    """The values of a description that fields_of cannot take as written: counts that are no counts (not
    finite, negative, fractional, too large, not numbers) and texts longer than the table's columns."""
    problems: list[Problem] = []
    fields_of(description, description_format, problems)
    return problems
