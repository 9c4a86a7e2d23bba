"""Fixtures of the read side's tests."""

import pytest


@pytest.fixture
def v51(rounds):
    """The v5.1 round of the catalogue (the `rounds` fixture)."""
    return rounds["training-v5.1"]
