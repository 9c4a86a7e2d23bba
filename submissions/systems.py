"""Reading a system description (v0.5 entry.json or v0.6+ systems/*.json) into table fields."""

import re

CATEGORY_WORDS = [
    ("cloud", "cloud"),
    ("prem", "onprem"),
    ("preview", "preview"),
    ("research", "research"),
    ("rdi", "research"),
    ("internal", "research"),
]


def category_of(status: str) -> str:
    """Map a submission status as written ('Available cloud', 'on-prem', 'RDI', ...) to a category key."""
    text = (status or "").lower()
    for word, category in CATEGORY_WORDS:
        if word in text:
            return category
    return "unknown"


def division_of(text: str) -> str:
    return "open" if "open" in (text or "").lower() else "closed"


def to_int(value) -> int | None:
    """'8', 8, '2x', ' 16 ' -> int; '-', '', 'N/A' -> None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    match = re.match(r"\s*(\d+)", str(value or ""))
    return int(match.group(1)) if match else None


def _leading_count(text: str) -> tuple[int | None, str]:
    """'2x Intel Xeon' -> (2, 'Intel Xeon')."""
    match = re.match(r"\s*(\d+)\s*[xX×]\s*(.+)", text or "")
    if match:
        return int(match.group(1)), match.group(2).strip()
    return None, (text or "").strip()


def _times(a, b):
    return a * b if a is not None and b is not None else None


def _group_accelerators(group: dict) -> int:
    """The accelerators of one entry.json node group: num_accelerators per node (NVIDIA's 128 DGX-1 with 8),
    but the group's total when the accelerator is named by that count: Google's "tpuv2-512" pod slice with
    num_accelerators 512 runs on 64 hosts (num_nodes), not 64 x 512."""
    count = to_int(group.get("num_accelerators")) or 0
    if str(group.get("accelerator") or "").strip().endswith(f"-{count}"):
        return count
    return (to_int(group.get("num_nodes")) or 1) * count


def from_entry_json(desc: dict) -> dict:
    """v0.5-style entry.json: top-level division/status/framework and a list of node groups."""
    nodes = [n for n in desc.get("nodes") or [] if isinstance(n, dict)]
    node_count = sum(to_int(n.get("num_nodes")) or 0 for n in nodes) or None
    accelerators = sum(map(_group_accelerators, nodes))
    processors = None
    processor_model = ""
    if nodes:
        per_node, processor_model = _leading_count(str(nodes[0].get("cpu", "")))
        processors = _times(per_node or 1, node_count) if processor_model else None
    return {
        "name": str(desc.get("hardware") or ""),
        "division": division_of(desc.get("division", "")),
        "category": category_of(desc.get("status", "")),
        "accelerator_model": str(nodes[0].get("accelerator", "")) if nodes else "",
        "accelerator_count": accelerators or None,
        "processor_model": processor_model,
        "processor_count": processors,
        "nodes": node_count,
        "framework": str(desc.get("framework") or ""),
        "interconnect": str(desc.get("interconnect") or ""),
    }


def _as_schema_spells(desc: dict) -> dict:
    """The description's keys as the system.json schema spells them, whatever their case and separators
    (Intel's v0.6 files say "number of nodes")."""
    return {re.sub(r"[\s-]+", "_", str(key).strip().lower()): value for key, value in desc.items()}


def from_system_json(desc: dict) -> dict:
    """v0.6+ systems/<name>.json: flat keys, counts as strings."""
    desc = _as_schema_spells(desc)
    nodes = to_int(desc.get("number_of_nodes"))
    return {
        "name": str(desc.get("system_name") or ""),
        "division": division_of(desc.get("division", "")),
        "category": category_of(desc.get("status", "")),
        "accelerator_model": str(desc.get("accelerator_model_name") or ""),
        "accelerator_count": _times(nodes, to_int(desc.get("accelerators_per_node"))),
        "processor_model": str(desc.get("host_processor_model_name") or ""),
        "processor_count": _times(nodes, to_int(desc.get("host_processors_per_node"))),
        "nodes": nodes,
        "framework": str(desc.get("framework") or ""),
        "interconnect": str(desc.get("accelerator_interconnect") or desc.get("host_networking") or ""),
    }


def fields_of(description: dict, description_format: str) -> dict:
    """By the file's kind, or by its shape: a systems/*.json written as an entry.json (a "nodes" list, no
    number_of_nodes: Fujitsu's v0.6 ABCI) is read as one. The rules still judge it as the file its kind asks
    for (rules.check_system): this only fills the table's fields."""
    if description_format == "entry.json" or (
            isinstance(description.get("nodes"), list) and "number_of_nodes" not in _as_schema_spells(description)):
        return from_entry_json(description)
    return from_system_json(description)
