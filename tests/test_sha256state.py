"""The resumable sha256 (submissions/intake/sha256state.py): a state saved part-way and resumed elsewhere."""

import hashlib
import os

import pytest

from submissions.intake import sha256state

pytestmark = pytest.mark.skipif(not sha256state.AVAILABLE, reason="no usable libcrypto here")


def test_a_state_saved_between_parts_of_any_size_gives_hashlibs_digest():
    data = os.urandom(300_001)
    for cuts in ([0], [1, 63, 64, 65], [100_000, 200_000], [299_999]):
        digest, start = sha256state.Sha256(), 0
        for cut in [*cuts, len(data)]:
            digest = sha256state.Sha256(digest.state)  # as another process would, from the row
            digest.update(memoryview(data)[start:cut])
            start = cut
        assert digest.hexdigest() == hashlib.sha256(data).hexdigest()


def test_reading_the_digest_does_not_spoil_the_state():
    digest = sha256state.Sha256()
    digest.update(b"abc")
    assert digest.hexdigest() == digest.hexdigest() == hashlib.sha256(b"abc").hexdigest()
    digest.update(bytearray(b"def"))
    assert digest.hexdigest() == hashlib.sha256(b"abcdef").hexdigest()


def test_a_state_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError):
        sha256state.Sha256(b"\0" * 10)
