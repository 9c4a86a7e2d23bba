"""Every system description in the shared rounds, read straight from the tarballs (no pipeline, no database).

Run as a script to list, per round, the descriptions whose fields come out blank:
    python -m tests.checking.test_systems_real
"""

import json
import sys

import pytest

from submissions.checking.systems import NO_VALUE

from ..conftest import SHARED, shared_plain_tar
from ..system_descriptions import ROUNDS, descriptions

pytestmark = pytest.mark.shared_rounds

INTERCONNECT_KEYS = ("interconnect", "accelerator_interconnect", "host_networking")


def blank_accelerators(read: dict) -> list[str]:
    """Descriptions whose accelerator count is unknown, or that count accelerators without naming them.
    A stated count of 0 (a CPU-only system, Intel's) is a count."""
    return sorted(
        name
        for name, (_, f, _) in read.items()
        if f["accelerator_count"] is None or (f["accelerator_count"] and not f["accelerator_model"])
    )


def blank(read: dict, field: str) -> list[str]:
    return sorted(name for name, (_, f, _) in read.items() if f[field] in ("", None))


@pytest.fixture(scope="module", params=sorted(ROUNDS))
def round_read(request):
    return request.param, descriptions(shared_plain_tar(ROUNDS[request.param]))


@pytest.fixture(scope="module")
def v06():
    return descriptions(shared_plain_tar(ROUNDS["v0.6"]))


def test_every_description_of_every_round_names_its_hardware(round_read):
    key, read = round_read
    assert len(read) == {"v0.5": 30, "v0.6": 32, "v5.1": 92}[key]
    assert blank_accelerators(read) == []
    for field in ("processor_model", "processor_count", "nodes", "framework", "name"):
        assert blank(read, field) == [], field
    assert not [n for n, (d, _, _) in read.items() if not d], "a description read as empty"


def test_interconnect_is_blank_only_where_the_file_leaves_it_empty(round_read):
    def stated(desc):
        entry = desc.get("entry") if isinstance(desc.get("entry"), dict) else {}
        return any(
            str(v).strip().lower() not in NO_VALUE
            for v in [desc.get(k) for k in INTERCONNECT_KEYS] + [entry.get("interconnect")]
            if v is not None
        )

    _, read = round_read
    assert [n for n in blank(read, "interconnect") if stated(read[n][0])] == []


def test_v06_nvidia_log_line_descriptions_are_read_whole(v06):
    nvidia = {n: r for n, r in v06.items() if n.startswith("NVIDIA/")}
    assert len(nvidia) == 22
    for name, (desc, fields, notes) in nvidia.items():
        assert isinstance(desc["entry"], dict) and isinstance(desc["entry"]["nodes"], dict), name
        assert isinstance(desc["entry"]["libraries"], dict), name
        assert "V100" in fields["accelerator_model"] and fields["accelerator_count"] % 8 == 0, name
        assert not [n for n in notes if "kept as text" in n], name

    desc, fields, _ = v06["NVIDIA/systems/dgx2h_n96_ngc19.05_mxnet.json"]
    assert (fields["nodes"], fields["accelerator_count"], fields["processor_count"]) == (
        96,
        1536,
        192,
    )
    assert (
        fields["accelerator_model"]
        == "Tesla V100-SXM3-32GB-H"
        == desc["entry"]["nodes"]["accelerator"]
    )
    assert (fields["name"], fields["framework"], fields["interconnect"]) == (
        "96xNVIDIA DGX-2H",
        "MXNet NVIDIA Release 19.05",
        "InfiniBand 100 Gb/sec (4X EDR)",
    )
    assert fields["processor_model"] == "Intel(R) Xeon(R) Platinum 8174 CPU @ 3.10GHz"


def test_v06_cpu_only_and_entry_shaped_files(v06):
    def hardware(name):
        f = v06[name][1]
        return f["accelerator_count"], f["accelerator_model"], f["processor_count"], f["nodes"]

    assert hardware("Intel/systems/clx-8260l-2s-x32.json") == (
        0,
        "",
        64,
        32,
    )  # "accelerator": "NA", 0 of them
    assert hardware("Fujitsu/systems/abci_2048xV100_mxnet.json") == (
        2048,
        "Tesla V100-SXM2-16GB",
        1024,
        512,
    )
    assert hardware("Alibaba/results/sinian/entry.json") == (64, "Tesla V100-PCIe-32GB", 16, 16)
    assert hardware("Google/systems/tpu-v3-2048.json") == (1024, "tpu-v3", 1, 1)


def main() -> None:
    for key, tarball in sorted(ROUNDS.items()):
        path = SHARED / tarball
        if not path.is_file():
            print(f"{key}: {path} is not here")
            continue
        read = descriptions(path)
        no_model = [
            n
            for n, (_, f, _) in read.items()
            if f["accelerator_count"] and not f["accelerator_model"]
        ]
        no_count = blank(read, "accelerator_count")
        cpu_only = [n for n, (_, f, _) in read.items() if f["accelerator_count"] == 0]
        print(
            f"{key}: {len(read)} descriptions; blank accelerator model {len(no_model)}, blank accelerator count "
            f"{len(no_count)}; CPU only (0 stated) {len(cpu_only)}"
        )
        for name in sorted(set(no_model) | set(no_count)):
            print(f"  blank: {name}: {json.dumps(read[name][1])}")


if __name__ == "__main__":
    sys.exit(main())
