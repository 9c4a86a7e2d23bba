"""The words a search reads (leaderboard/roundtable/textsearch.py) and the size of the query they make."""

from leaderboard.api.filters import ResultFilter, SystemFilter
from leaderboard.models import Result, System
from leaderboard.roundtable import textsearch


def test_it_reads_a_bounded_number_of_distinct_words():
    assert textsearch.words("H100  nvidia NVIDIA h100 pytorch") == ["H100", "nvidia", "pytorch"]
    many = " ".join(f"w{i}" for i in range(1900))
    assert textsearch.words(many) == [f"w{i}" for i in range(textsearch.MAX_WORDS)]
    assert textsearch.words("x" * 10_000) == ["x" * textsearch.MAX_LENGTH]
    assert textsearch.words("   ") == []


def test_a_query_of_many_words_is_no_bigger_than_one_of_a_few():
    few = " ".join(f"w{i}" for i in range(textsearch.MAX_WORDS))
    many = " ".join(f"w{i}" for i in range(1900))
    for filterset, model in ((ResultFilter, Result), (SystemFilter, System)):
        sizes = [
            len(str(filterset({"q": q}, queryset=model.objects.all()).qs.query))
            for q in (few, many)
        ]
        assert sizes[0] == sizes[1] < 10_000
