"""conftest.ONE_WORKER names every test module (or package, for a conftest) that builds a fixture for more
than one test, so that one xdist worker builds it once, and names nothing that is not there."""

import re

from .conftest import ONE_WORKER, ROOT

SHARED_SCOPE = re.compile(r"""scope=["'](module|package|session)["']""")


def test_every_module_with_a_shared_fixture_runs_in_one_worker():
    sharing = set()
    for path in (ROOT / "tests").rglob("*.py"):
        if path.name.startswith("test_") or path.name == "conftest.py":
            if SHARED_SCOPE.search(path.read_text()):
                relative = path.relative_to(ROOT)
                sharing.add(f"{relative.parent}/" if path.name == "conftest.py" else str(relative))
    missing = {m for m in sharing if not any(m.startswith(group) for group in ONE_WORKER)}
    assert missing == set(), "add them to ONE_WORKER in tests/conftest.py"


def test_every_group_is_a_test_module_or_package():
    assert [g for g in ONE_WORKER if not (ROOT / g).exists()] == []
