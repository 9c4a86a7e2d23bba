"""Reading system descriptions into table fields."""

from submissions.systems import category_of, fields_of, to_int


def test_it_reads_a_v05_entry_json():
    fields = fields_of({
        "division": "closed", "status": "on-prem", "hardware": "DGX-1V", "framework": "MXNet NGC 18.11",
        "interconnect": "InfiniBand EDR",
        "nodes": [{"num_nodes": 2, "cpu": "2x Intel(R) Xeon(R) CPU E5-2698 v4", "accelerator": "Tesla V100",
                   "num_accelerators": 8}],
    }, "entry.json")
    assert fields["name"] == "DGX-1V"
    assert fields["category"] == "onprem"
    assert fields["accelerator_count"] == 16
    assert fields["processor_count"] == 4
    assert fields["processor_model"] == "Intel(R) Xeon(R) CPU E5-2698 v4"
    assert fields["nodes"] == 2


def test_a_tpu_pod_slice_counts_the_accelerators_its_name_gives_once_not_per_host():
    def count(accelerator, nodes, accelerators):
        desc = {"nodes": [{"num_nodes": nodes, "accelerator": accelerator, "num_accelerators": accelerators}]}
        return fields_of(desc, "entry.json")["accelerator_count"]

    # As v0.5's Google entries give them: the slice's size on its hosts.
    assert (count("tpuv2-512", 64, 512), count("tpuv3-32", 2, 32), count("tpuv2-8", 1, 8)) == (512, 32, 8)
    # Per node otherwise, also when a name ends in another number.
    assert (count("Tesla V100-SXM2-16GB", 128, 8), count("Tesla V100-SXM3-H-32GB", 36, 16),
            count("tpuv3-32", 2, 16)) == (1024, 576, 32)


def test_it_reads_a_system_json_with_counts_as_strings():
    fields = fields_of({
        "division": "closed", "status": "Available cloud", "system_name": "tpu-v3",
        "number_of_nodes": "4", "host_processors_per_node": "2", "host_processor_model_name": "Skylake",
        "accelerators_per_node": "8", "accelerator_model_name": "tpu-v3", "framework": "TF",
    }, "system.json")
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
    fields = fields_of({"number of nodes": "32", "Host-Processors-Per-Node": "2", "system_name": "CLX-8260L-2S",
                        "host_processor_model_name": "Xeon 8260L", "nodes": [{"num_nodes": 1}]}, "system.json")
    assert (fields["nodes"], fields["processor_count"], fields["name"]) == (32, 64, "CLX-8260L-2S")


def test_a_systems_json_written_as_an_entry_json_is_read_as_one():
    fields = fields_of({"division": "open", "status": "research", "hardware": "CX2570-m4 ABCI(AIST)",
                        "nodes": [{"num_nodes": 512, "cpu": "2x Intel(R) Xeon(R) Gold 6148",
                                   "accelerator": "Tesla V100-SXM2-16GB", "num_accelerators": 4}]}, "system.json")
    assert (fields["accelerator_count"], fields["nodes"], fields["processor_count"]) == (2048, 512, 1024)
    assert (fields["name"], fields["division"], fields["category"]) == ("CX2570-m4 ABCI(AIST)", "open", "research")
