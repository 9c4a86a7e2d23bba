"""Reading system descriptions into table fields."""

import json
import re

import pytest

from submissions.checking.bundles.layout import read_description
from submissions.checking.systems import (
    LiteralError,
    category_of,
    expand_literals,
    fields_of,
    read_literal,
    to_int,
)


def test_it_reads_a_v05_entry_json():
    fields = fields_of(
        {
            "division": "closed",
            "status": "on-prem",
            "hardware": "DGX-1V",
            "framework": "MXNet NGC 18.11",
            "interconnect": "InfiniBand EDR",
            "nodes": [
                {
                    "num_nodes": 2,
                    "cpu": "2x Intel(R) Xeon(R) CPU E5-2698 v4",
                    "accelerator": "Tesla V100",
                    "num_accelerators": 8,
                }
            ],
        },
        "entry.json",
    )
    assert fields["name"] == "DGX-1V"
    assert fields["category"] == "onprem"
    assert fields["accelerator_count"] == 16
    assert fields["processor_count"] == 4
    assert fields["processor_model"] == "Intel(R) Xeon(R) CPU E5-2698 v4"
    assert fields["nodes"] == 2


def test_a_tpu_pod_slice_counts_the_accelerators_its_name_gives_once_not_per_host():
    def count(accelerator, nodes, accelerators):
        desc = {
            "nodes": [
                {"num_nodes": nodes, "accelerator": accelerator, "num_accelerators": accelerators}
            ]
        }
        return fields_of(desc, "entry.json")["accelerator_count"]

    # As v0.5's Google entries give them: the slice's size on its hosts.
    assert (count("tpuv2-512", 64, 512), count("tpuv3-32", 2, 32), count("tpuv2-8", 1, 8)) == (
        512,
        32,
        8,
    )
    # Per node otherwise, also when a name ends in another number.
    assert (
        count("Tesla V100-SXM2-16GB", 128, 8),
        count("Tesla V100-SXM3-H-32GB", 36, 16),
        count("tpuv3-32", 2, 16),
    ) == (1024, 576, 32)


def test_it_reads_a_system_json_with_counts_as_strings():
    fields = fields_of(
        {
            "division": "closed",
            "status": "Available cloud",
            "system_name": "tpu-v3",
            "number_of_nodes": "4",
            "host_processors_per_node": "2",
            "host_processor_model_name": "Skylake",
            "accelerators_per_node": "8",
            "accelerator_model_name": "tpu-v3",
            "framework": "TF",
        },
        "system.json",
    )
    assert (fields["accelerator_count"], fields["processor_count"], fields["nodes"]) == (32, 8, 4)
    assert fields["category"] == "cloud"


def test_unknown_counts_stay_empty():
    fields = fields_of({"number_of_nodes": "-", "accelerators_per_node": "8"}, "system.json")
    assert fields["accelerator_count"] is None
    assert to_int("N/A") is None and to_int(True) is None


def test_categories_as_submitters_write_them():
    assert category_of("Available on-premise") == "onprem"
    assert category_of("onprem") == "onprem"
    assert category_of("research") == "research"
    assert category_of("Research, Development, or Internal (RDI)") == "research"
    assert category_of("preview") == "preview"
    assert category_of("") == "unknown"


def test_system_json_keys_are_read_whatever_their_case_and_separators():
    fields = fields_of(
        {
            "number of nodes": "32",
            "Host-Processors-Per-Node": "2",
            "system_name": "CLX-8260L-2S",
            "host_processor_model_name": "Xeon 8260L",
            "nodes": [{"num_nodes": 1}],
        },
        "system.json",
    )
    assert (fields["nodes"], fields["processor_count"], fields["name"]) == (32, 64, "CLX-8260L-2S")


def test_a_systems_json_written_as_an_entry_json_is_read_as_one():
    fields = fields_of(
        {
            "division": "open",
            "status": "research",
            "hardware": "CX2570-m4 ABCI(AIST)",
            "nodes": [
                {
                    "num_nodes": 512,
                    "cpu": "2x Intel(R) Xeon(R) Gold 6148",
                    "accelerator": "Tesla V100-SXM2-16GB",
                    "num_accelerators": 4,
                }
            ],
        },
        "system.json",
    )
    assert (fields["accelerator_count"], fields["nodes"], fields["processor_count"]) == (
        2048,
        512,
        1024,
    )
    assert (fields["name"], fields["division"], fields["category"]) == (
        "CX2570-m4 ABCI(AIST)",
        "open",
        "research",
    )


# --- formats as the shared rounds write them, and hostile ones --------------------------------------------

NVIDIA_V06 = """org: {"value": "NVIDIA", "metadata": {"file": "mlperf_log_utils.py", "lineno": 231}}
division: {"metadata": {"lineno": 235}, "value": "closed"}
status: {"value": "onprem"}
platform: {"value": "96xNVIDIA DGX-2H"}
entry: {"value": "{'os': 'Ubuntu 18.04.1 LTS', 'nodes': \\"{'num_nodes': '96', 'cpu': '2x Intel(R) Xeon(R) Platinum 8174', 'accelerator': 'Tesla V100-SXM3-32GB-H', 'num_accelerators': '16'}\\", 'interconnect': 'InfiniBand 100 Gb/sec (4X EDR)', 'libraries': \\"{'nccl_version': '2.4.6'}\\", 'framework': 'MXNet NVIDIA Release 19.05', 'hardware': 'NVIDIA DGX-2H'}"}
poc_name: {"value": "Someone"}
"""


def read(text: str) -> tuple[dict, list[str]]:
    notes = []
    desc, _ = read_description(text.encode(), "X/systems/s.json", notes)
    return desc, notes


def test_nvidia_v06_log_lines_with_literal_values_are_read_as_nested_tables():
    desc, notes = read(NVIDIA_V06)
    assert desc["entry"]["nodes"] == {
        "num_nodes": "96",
        "cpu": "2x Intel(R) Xeon(R) Platinum 8174",
        "accelerator": "Tesla V100-SXM3-32GB-H",
        "num_accelerators": "16",
    }
    assert desc["entry"]["libraries"] == {"nccl_version": "2.4.6"} and desc["org"] == "NVIDIA"
    assert not [n for n in notes if "kept as text" in n]
    fields = fields_of(desc, "system.json")
    assert (fields["nodes"], fields["accelerator_count"], fields["processor_count"]) == (
        96,
        1536,
        192,
    )
    assert (fields["accelerator_model"], fields["processor_model"]) == (
        "Tesla V100-SXM3-32GB-H",
        "Intel(R) Xeon(R) Platinum 8174",
    )
    assert (fields["name"], fields["framework"], fields["interconnect"]) == (
        "96xNVIDIA DGX-2H",
        "MXNet NVIDIA Release 19.05",
        "InfiniBand 100 Gb/sec (4X EDR)",
    )
    assert (fields["division"], fields["category"]) == ("closed", "onprem")


def test_fields_are_read_from_literals_still_stored_as_text():
    desc = {
        "division": "closed",
        "status": "onprem",
        "entry": "{'nodes': \"{'num_nodes': '2', "
        "'accelerator': 'V100', 'num_accelerators': '8'}\", 'framework': 'MXNet'}",
    }
    fields = fields_of(desc, "system.json")
    assert (fields["accelerator_count"], fields["nodes"], fields["framework"]) == (16, 2, "MXNet")


def test_a_literal_is_read_never_run():
    for text in (
        "{'a': __import__('os').system('touch /tmp/pwned-h1')}",
        "{'a': (lambda: 1)()}",
        "{'a': open('/etc/passwd').read()}",
    ):
        with pytest.raises(LiteralError, match="not a JSON or Python literal"):
            read_literal(text)
    desc, notes = read("entry: {\"value\": \"{'x': __import__('os').getcwd()}\"}\n")
    assert desc == {"entry": "{'x': __import__('os').getcwd()}"}  # kept as text, and said so
    assert notes_like(notes, r"'entry' is not a JSON or Python literal .*kept as text")


def test_literal_values_json_cannot_hold_become_lists_or_text():
    assert read_literal("{'s': {1, 2}, 't': (1, 'a'), 'b': b'x', 'n': None, 1: True}") == {
        "s": [1, 2],
        "t": [1, "a"],
        "b": "b'x'",
        "n": None,
        "1": True,
    }
    assert read_literal('{"a": true, "b": null}') == {"a": True, "b": None}  # JSON's words too


@pytest.mark.parametrize(
    "text, reason",
    [
        ("[" * 10_000 + "]" * 10_000, "brackets nested more than"),
        ("{'a': '" + "x" * 70_000 + "'}", "longer than"),
        ("{'a': " + "9" * 5000 + "}", "not a JSON or Python literal"),  # past Python's digit limit
        ("{'a': }", "not a JSON or Python literal"),
        ("{" * 20 + "}" * 20, "not a JSON or Python literal"),  # unhashable dict keys
    ],
)
def test_hostile_literals_are_refused_with_a_reason(text, reason):
    with pytest.raises(LiteralError, match=reason):
        read_literal(text)
    desc, notes = read(f"entry: {json.dumps({'value': text})}\n")
    assert desc == {"entry": text} and notes_like(notes, r"'entry' is .*kept as text")


def test_literals_nested_in_literals_stop_at_a_depth():
    text = "x"
    for _ in range(12):  # each level escapes the one inside: the text doubles
        text = repr({"k": text})
    expanded = expand_literals({"entry": text})
    depth, value = 0, expanded["entry"]
    while isinstance(value, dict):
        depth, value = depth + 1, value["k"]
    assert 1 < depth < 12 and isinstance(value, str)
    assert fields_of({"entry": text}, "system.json")["accelerator_count"] is None


def test_json_nested_past_the_recursion_limit_is_a_note_not_an_error():
    desc, notes = read("[" * 200_000 + "]" * 200_000)
    assert desc == {} and notes_like(notes, r"nested more than 16 levels deep; it is ignored")
    desc, notes = read('a: {"value": ' + "[" * 200_000 + "]" * 200_000 + "}\n")
    assert desc == {}


def test_json_deeper_than_a_description_needs_is_refused_before_it_is_stored():
    deep = {"k": 1}
    for _ in range(20):
        deep = {"k": deep}
    desc, notes = read(json.dumps({"division": "closed", "deep": deep}))
    assert desc == {} and notes_like(notes, r"nested more than 16 levels deep")
    desc, notes = read(f"deep: {json.dumps({'value': deep})}\n")
    assert desc == {}
    assert read(json.dumps({"a": {"b": {"c": [1]}}}))[0] == {"a": {"b": {"c": [1]}}}


def test_a_cpu_only_system_states_zero_accelerators():
    # Intel v0.6: system.json keys for the processors, an entry.json node group for the (absent) accelerators.
    fields = fields_of(
        {
            "sumitter": "Intel_Corp",
            "division": "closed",
            "status": "on-premise",
            "number of nodes": "32",
            "host_processors_per_node": "2",
            "host_processor_model_name": "Intel(R) Xeon(R) Platinum 8260L",
            "interconnect": "100Gb OPA",
            "nodes": [
                {
                    "num_nodes": 32,
                    "cpu": "Intel(R) Xeon(R) Platinum 8260L",
                    "accelerator": "NA",
                    "num_accelerators": 0,
                }
            ],
        },
        "system.json",
    )
    assert (fields["accelerator_count"], fields["accelerator_model"]) == (0, "")
    assert (fields["processor_count"], fields["nodes"], fields["interconnect"]) == (
        64,
        32,
        "100Gb OPA",
    )


def test_the_shown_names_are_as_the_description_writes_them_n_a_included():
    # Intel v1.0 (1-node-4s-8380H-pytorch): a CPU-only system whose accelerator is "N/A", which MLCommons'
    # summary shows (mlperf-logging's result_summarizer copies the field); its count is 0 all the same.
    fields = fields_of(
        {
            "submitter": "Intel",
            "division": "closed",
            "status": "available",
            "system_name": "1-node-4S-CPX-PyTorch-BF16",
            "number_of_nodes": "1",
            "host_processors_per_node": "4",
            "host_processor_model_name": " Intel(R) Xeon(R) Platinum 8380H CPU ",
            "accelerators_per_node": "0",
            "accelerator_model_name": "N/A",
            "framework": "PyTorch",
        },
        "system.json",
    )
    assert (fields["accelerator_count"], fields["accelerator_model"]) == (0, "N/A")
    assert fields["processor_model"] == "Intel(R) Xeon(R) Platinum 8380H CPU"
    assert (fields["processor_count"], fields["framework"]) == (4, "PyTorch")


def test_v05_processors_per_node_from_the_hardware_line():
    def processors(hardware, cpu, nodes):
        desc = {
            "hardware": hardware,
            "nodes": [{"num_nodes": nodes, "cpu": cpu, "accelerator": "NA", "num_accelerators": 0}],
        }
        return fields_of(desc, "entry.json")["processor_count"]

    cpu = "Intel(R) Xeon(R) Platinum 8180 CPU @ 2.50GHz"
    assert processors("8-nodes 2x Intel(R) Xeon(R) Platinum 8180 processor", cpu, 8) == 16
    assert processors("1-node 4x Intel(R) Xeon(R) Platinum 8180 processor", cpu, 1) == 4
    assert (
        processors("n1-highmem-96 w/8xV100", "Intel Skylake", 1) == 1
    )  # 8x counts the GPUs, not the CPU
    assert processors("DGX-1", "2x Intel(R) Xeon(R) CPU E5-2698 v4", 4) == 8


def test_node_groups_add_up_and_unstated_counts_stay_unknown():
    desc = {
        "nodes": [
            {"num_nodes": 2, "cpu": "2x Xeon", "accelerator": "V100", "num_accelerators": 8},
            {"num_nodes": 1, "cpu": "1x Xeon", "accelerator": "V100", "num_accelerators": 4},
        ]
    }
    fields = fields_of(desc, "entry.json")
    assert (fields["accelerator_count"], fields["processor_count"], fields["nodes"]) == (20, 5, 3)
    assert (
        fields_of({"nodes": [{"num_nodes": 2, "accelerator": "V100"}]}, "entry.json")[
            "accelerator_count"
        ]
        is None
    )


def test_framework_name_stands_in_for_a_missing_framework():
    assert (
        fields_of({"framework_name": "ngc25.09_nemo"}, "system.json")["framework"]
        == "ngc25.09_nemo"
    )
    assert (
        fields_of({"framework": "PyTorch", "framework_name": "x"}, "system.json")["framework"]
        == "PyTorch"
    )


def notes_like(notes, pattern):
    return [n for n in notes if re.search(pattern, n)]


# --- the system page ---------------------------------------------------------------------------------------


def description_section(html: str) -> str:
    start = html.index('id="desc-h"')
    return html[start : html.index("</section>", start)]


@pytest.mark.django_db
def test_the_system_page_shows_the_description_as_fields_never_as_a_repr(client, rounds):
    from .. import leaderboard_factories as make

    v06 = rounds["training-v0.6"]
    desc, _ = read(NVIDIA_V06)
    fields = fields_of(desc, "system.json")
    s = make.system(v06, "NVIDIA", "dgx2h_n96_ngc19.05_mxnet", description=desc, **fields)
    make.result(s, v06.benchmarks.first().key, 80)
    html = client.get(s.get_absolute_url()).content.decode()
    assert re.search(r"<dt>Accelerators</dt><dd>1536 Tesla V100-SXM3-32GB-H</dd>", html)
    section = description_section(html)
    assert "{'" not in section and '{"' not in section and "&#x27;" not in section
    assert re.search(
        r"<dt>entry</dt><dd><dl[^>]*>.*<dt>nodes</dt><dd><dl[^>]*>.*<dt>num_accelerators</dt><dd>16</dd>",
        section,
        re.S,
    )
    assert (
        "<dt>nccl_version</dt><dd>2.4.6</dd>" in section
        and "<dt>poc_name</dt><dd>Someone</dd>" in section
    )


@pytest.mark.django_db
def test_the_system_page_shows_lists_and_bounds_what_a_file_nests(client, rounds):
    from .. import leaderboard_factories as make

    v06 = rounds["training-v0.6"]
    deep = "bottom"
    for _ in range(40):
        deep = {"k": deep}
    desc = {
        "nodes": [{"num_nodes": 2, "cpu": "<b>Xeon</b>"}, {"num_nodes": 1}],
        "tags": ["a", "b"],
        "flag": True,
        "deep": deep,
        "wide": {f"f{i:03d}": i for i in range(250)},
    }
    s = make.system(
        v06, "Intel", "cpu", description=desc, accelerator_count=0, accelerator_model=""
    )
    make.result(s, v06.benchmarks.first().key, 80)
    html = client.get(s.get_absolute_url()).content.decode()
    assert "<dt>Accelerators</dt><dd>None (the description states 0)</dd>" in html
    section = description_section(html)
    assert re.search(
        r"<dt>nodes</dt><dd><ol[^>]*><li><dl[^>]*>.*<dt>cpu</dt><dd>&lt;b&gt;Xeon&lt;/b&gt;</dd>",
        section,
        re.S,
    )
    assert (
        '<ul class="description"><li>a</li><li>b</li></ul>' in section
        and "<dt>flag</dt><dd>yes</dd>" in section
    )
    assert "nested deeper than" in section and "bottom" not in section
    assert "<dd>50 more fields</dd>" in section and "f199" in section and "f200" not in section
    assert "{'" not in section and '{"' not in section and "[" not in section
