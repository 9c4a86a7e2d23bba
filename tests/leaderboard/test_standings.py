"""Progress between two rounds at equal scale (leaderboard.pages.standings), computed directly."""

from leaderboard.pages.standings import Entry, at_matched_counts, best_per_round, per_accelerator


def entry(round_key, organisation, count, minutes, bench="bert"):
    return Entry(
        round_key, bench, organisation, f"{organisation}-{count}", "GPU", count, minutes, ""
    )


ENTRIES = [
    entry("v1", "Big", 8, 20.0),
    entry("v1", "Big", 64, 4.0),
    entry("v2", "Big", 8, 16.0),  # 1.25× at 8
    entry("v2", "Big", 3472, 0.1),  # no 3,472 in v1: never compared with its 64
    entry("v1", "Small", 8, 30.0),
    entry("v1", "Small", 8, 25.0),  # its fastest at 8
    entry("v2", "Small", 8, 10.0),  # 2.5× at 8
    entry("v2", "Small", 16, 4.0),
    entry("v2", "Late", 8, 5.0),  # only in v2: in neither comparison
]


def test_matched_counts_compare_only_results_with_the_same_number_of_accelerators():
    gains = {
        (g.organisation, g.accelerators): round(g.gain, 3)
        for g in at_matched_counts(ENTRIES, "v1", "v2")
    }
    assert gains == {("Big", 8): 1.25, ("Small", 8): 2.5}


def test_per_accelerator_compares_the_least_accelerator_time_of_each_round():
    gains = {g.organisation: g for g in per_accelerator(ENTRIES, "v1", "v2")}
    assert set(gains) == {"Big", "Small"}
    # Big: 8 × 20 min = 160 acc-min in v1 (64 × 4 = 256 is more); 3,472 × 0.1 = 347.2 in v2, 8 × 16 = 128 less.
    assert gains["Big"].before.accelerator_count == 8 and gains["Big"].after.accelerator_count == 8
    assert round(gains["Big"].gain, 3) == 1.25
    # Small: 8 × 25 = 200 in v1; 16 × 4 = 64 in v2.
    assert round(gains["Small"].gain, 3) == round(200 / 64, 3)


def test_the_best_of_a_round_is_its_fastest_whatever_its_size():
    best = best_per_round(ENTRIES)
    assert best[("bert", "v2")].minutes == 0.1 and best[("bert", "v1")].minutes == 4.0
