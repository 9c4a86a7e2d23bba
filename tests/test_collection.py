"""What each of make test's workers pays before its first test: every one collects every test module, so an
import at a module's top is paid once per worker (four), though one worker runs the module's tests.

The few packages that take seconds to import are imported where a test uses them (a fixture, the function
that calls them): PyTorch through agent.probes (1.9 s), mlperf-logging's result_summarizer and its RCP
checker, with pandas and scipy (1.6 s). `pytest --collect-only` took 9.4-9.8 core-seconds with them at the
top, 5.5-6.1 without. Read with ast, so nothing is imported here."""

import ast

from .conftest import ROOT

SLOW_TO_IMPORT = (
    "torch",
    "agent.probes",
    "mlperf_logging.result_summarizer",
    "mlperf_logging.rcp_checker",
    "scipy",
)


def _imported_at_the_top(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of the imports that run when the module is imported: its body and its classes'
    bodies, not its functions'; pytest.importorskip("module") counts as an import."""
    found, pending = [], list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", None) == "importorskip"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.append((node.lineno, node.args[0].value))
        pending += list(ast.iter_child_nodes(node))
    return found


def _slow(name: str) -> bool:
    return any(name == slow or name.startswith(slow + ".") for slow in SLOW_TO_IMPORT)


def test_no_module_of_the_tests_imports_a_slow_package_at_its_top():
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for line, name in _imported_at_the_top(ast.parse(path.read_text(), str(path)))
        if _slow(name)
    ]
    assert not wrong, "import these where a test uses them (a fixture, a function):\n" + "\n".join(
        wrong
    )


def test_the_check_finds_an_import_at_the_top_and_not_one_in_a_function():
    source = (
        "import json\nfrom mlperf_logging.result_summarizer import result_summarizer as rs\n"
        "try:\n    import torch\nexcept ImportError:\n    torch = None\n"
        "def f():\n    from agent.probes import run_probe\n"
        "class C:\n    import scipy.stats\n"
        'np = pytest.importorskip("numpy")\nagent = pytest.importorskip("agent.probes")\n'
    )
    slow = [(line, name) for line, name in _imported_at_the_top(ast.parse(source)) if _slow(name)]
    assert sorted(slow) == [
        (2, "mlperf_logging.result_summarizer.result_summarizer"),
        (4, "torch"),
        (10, "scipy.stats"),
        (12, "agent.probes"),
    ]
