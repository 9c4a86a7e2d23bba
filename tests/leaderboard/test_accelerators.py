"""The accelerator families (leaderboard/catalogue/accelerators.toml): every accelerator name of the three shared rounds
has a family and an agents' queue, or is on purpose in none, with the reason."""

import pytest

from leaderboard.catalogue import accelerators
from leaderboard.catalogue.accelerators import family_of, placement

from ..conftest import shared_plain_tar
from ..system_descriptions import ROUNDS, descriptions


@pytest.fixture(scope="module")
def names_in_rounds() -> set[str]:
    return {
        fields["accelerator_model"]
        for tarball in ROUNDS.values()
        for _, fields, _ in descriptions(shared_plain_tar(tarball)).values()
    }


@pytest.mark.shared_rounds
def test_every_name_of_the_three_rounds_has_a_family_or_a_reason_for_none(names_in_rounds):
    listed = {name: f for f in accelerators.family_table() for name in f.names}
    assert len(names_in_rounds) == 25
    for name in names_in_rounds:
        where = placement(name)
        if name in listed:  # the patterns place it in the family whose list holds it
            assert family_of(name) == listed[name].name, name
            assert where.queue == (
                None if listed[name].queue == accelerators.NO_QUEUE else listed[name].queue
            )
        else:
            assert accelerators.unmapped_reason(name), f"{name!r} is in no family and no [[none]]"
            assert family_of(name) is None and where.queue is None
        assert where.queue or where.reason, name
    # The lists hold names seen, not guesses.
    assert set(listed) <= names_in_rounds


def test_no_name_is_listed_twice():
    names = [n for f in accelerators.family_table() for n in f.names]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    "name, family, queue",
    [
        ("NVIDIA H100-SXM5-80GB", "NVIDIA H100", "h100"),
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100", "h100"),  # as torch.cuda names it on an agent
        ("NVIDIA H200", "NVIDIA H200", "h200"),
        ("NVIDIA Blackwell GPU (GB200)", "NVIDIA GB200", "gb200"),
        ("NVIDIA B200", "NVIDIA B200", "b200"),
        ("Tesla V100-SXM2-16GB", "NVIDIA V100", "v100"),
        ("AMD Instinct MI300X 192GB HBM3", "AMD MI300X", "mi300x"),
        ("AMD Instinct MI300X", "AMD MI300X", "mi300x"),
    ],
)
def test_it_places_a_gpu_in_its_family_and_queue(name, family, queue):
    where = placement(name)
    assert (where.family, where.queue, where.reason) == (family, queue, "")
    assert where.precision == ("fp16" if family == "NVIDIA V100" else "bf16")  # Volta has no bf16


@pytest.mark.parametrize(
    "name, says",
    [
        ("tpuv3-8", "TPU"),
        ("tpu-v3", "TPU"),
        ("tpuv2-512", "TPU"),
        ("", "CPU-only"),
        ("Quantum Abacus 9000", "in no family"),
    ],
)
def test_it_says_why_no_agent_measures_the_others(name, says):
    where = placement(name)
    assert where.queue is None and says in where.reason
