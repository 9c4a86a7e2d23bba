"""docs/architecture.md against the tree: every import follows the one-way arrows, and no module
imports itself back through others. Imports are read with ast (those inside functions count too),
so nothing is imported or run."""

import ast
from pathlib import Path

from .conftest import ROOT

APPS = ("portal", "submissions", "notifications", "leaderboard", "accounts", "audit")
PROGRAMS = ("agent", "clients")  # separate programs: they import no app of the portal

# Which apps each app may import (besides itself); see docs/architecture.md.
APP_ARROWS = {
    "portal": {"submissions", "notifications", "leaderboard", "accounts", "audit"},
    "submissions": {"notifications", "leaderboard", "accounts", "audit", "portal.celery"},
    # notifications.emit: the write side's one call; leaderboard.access.policy: who hears of what;
    # accounts: the organisation a webhook belongs to
    "notifications": {"leaderboard", "accounts", "portal.celery"},
    # leaderboard.access.policy: who manages members; portal.celery: RETRY for the password reset mail's task
    "accounts": {"leaderboard", "audit", "portal.celery"},
    "leaderboard": {"audit"},
    "audit": set(),
}

# The rooms of submissions/, top to bottom: a room imports only itself and the rooms below it.
DOMAIN = (
    "submissions.checking.bundles",
    "submissions.checking.logs",
    "submissions.checking.rules",
    "submissions.checking.scoring",
    "submissions.checking.energy",
    "submissions.checking.systems",
    "submissions.checking.safejson",
    "submissions.checking.budget",
    "submissions.refchecks.implied",
    "submissions.refchecks.verdict",
)
RECORDS = (
    "submissions.models",
    "submissions.review.models",
    "submissions.refchecks.models",
    "submissions.storage",
)
ROOMS = [
    ("root", ("submissions",)),
    ("intake", ("submissions.intake",)),
    ("review", ("submissions.review",)),
    ("checking", ("submissions.checking",)),
    ("refchecks", ("submissions.refchecks",)),
    ("records", RECORDS),
    ("domain", DOMAIN),
]
DOMAIN_MAY_IMPORT_OUTSIDE = {
    "leaderboard.catalogue.accelerators",
    "leaderboard.catalogue.rule_catalogue",
    "leaderboard.catalogue.units",
}


# The rooms of leaderboard/ and the rooms each may import besides itself: pages and the API side by
# side over the round table, then who may see what, the catalogue's loaders, the records, and the
# catalogue's pure tables at the bottom.
TABLES = tuple(
    f"leaderboard.catalogue.{name}"
    for name in (
        "accelerators",
        "calendar",
        "findings_words",
        "frameworks",
        "organisations",
        "quality",
        "rule_catalogue",
        "units",
    )
)
LEADERBOARD_ROOMS = [
    ("root", ("leaderboard",)),
    ("pages", ("leaderboard.pages",)),
    ("logviewer", ("leaderboard.logviewer",)),
    ("api", ("leaderboard.api",)),
    ("roundtable", ("leaderboard.roundtable",)),
    ("access", ("leaderboard.access",)),
    ("catalogue", ("leaderboard.catalogue",)),
    (
        "records",
        ("leaderboard.models", "leaderboard.statuses", "leaderboard.cache", "leaderboard.panels"),
    ),
    ("tables", TABLES),
]
LEADERBOARD_ARROWS = {
    "root": {name for name, _ in LEADERBOARD_ROOMS} - {"root"},
    "pages": {"logviewer", "roundtable", "access", "catalogue", "records", "tables"},
    "logviewer": {"tables"},
    "api": {"roundtable", "access", "catalogue", "records", "tables"},
    "roundtable": {"access", "catalogue", "records", "tables"},
    "access": {"records", "tables"},
    "catalogue": {"records", "tables"},
    "records": {"tables"},
    "tables": set(),
}


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def room_of(module: str, rooms=ROOMS) -> str:
    """The most specific room whose prefix holds the module (records and domain before their rooms)."""
    best, length = None, -1
    for name, prefixes in rooms:
        for prefix in prefixes:
            if _within(module, prefix) and len(prefix) > length:
                best, length = name, len(prefix)
    return best


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources():
    for top in APPS + PROGRAMS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" not in path.parts:
                yield _module_name(path), path


MODULES = dict(_sources())


def _imports(module: str, path: Path) -> set[str]:
    """The project's modules that `module` imports, anywhere in it."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            # `from package import name`: the submodule when there is one, else the package.
            targets = []
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                folder = ROOT.joinpath(*source.split("."))
                if sub in MODULES:
                    targets.append(sub)
                elif list(folder.glob(f"{alias.name}.*")):  # a compiled module (logs/_scan.c)
                    continue
                else:
                    targets.append(source)
        else:
            continue
        for target in targets:
            # the longest known module the import names (a name inside a module is its module)
            parts = target.split(".")
            while parts and ".".join(parts) not in MODULES:
                parts.pop()
            if parts and ".".join(parts) != module:
                found.add(".".join(parts))
    return found


IMPORTS = {module: _imports(module, path) for module, path in MODULES.items()}


def _app(module: str) -> str:
    return module.split(".")[0]


def test_the_apps_import_one_way():
    wrong = []
    for module, targets in IMPORTS.items():
        app = _app(module)
        for target in targets:
            other = _app(target)
            if other == app:
                continue
            if app in PROGRAMS or other in PROGRAMS:
                wrong.append(f"{module} -> {target}")
            elif other not in APP_ARROWS[app] and not any(
                _within(target, allowed) for allowed in APP_ARROWS[app]
            ):
                wrong.append(f"{module} -> {target}")
    assert not wrong, "imports against docs/architecture.md's arrows between apps:\n" + "\n".join(
        sorted(wrong)
    )


def test_every_room_imports_only_the_rooms_below_it():
    order = [name for name, _ in ROOMS]
    wrong = []
    for module, targets in IMPORTS.items():
        if _app(module) != "submissions":
            continue
        room = room_of(module)
        for target in targets:
            if _app(target) != "submissions":
                continue
            other = room_of(target)
            if order.index(other) < order.index(room):
                wrong.append(f"{module} ({room}) -> {target} ({other})")
    assert not wrong, "imports against the rooms' order (docs/architecture.md):\n" + "\n".join(
        sorted(wrong)
    )


def test_leaderboards_rooms_import_along_their_arrows():
    wrong = []
    for module, targets in IMPORTS.items():
        if _app(module) != "leaderboard":
            continue
        room = room_of(module, LEADERBOARD_ROOMS)
        for target in targets:
            if _app(target) != "leaderboard":
                continue
            other = room_of(target, LEADERBOARD_ROOMS)
            if other != room and other not in LEADERBOARD_ARROWS[room]:
                wrong.append(f"{module} ({room}) -> {target} ({other})")
    assert not wrong, "imports against leaderboard's arrows (docs/architecture.md):\n" + "\n".join(
        sorted(wrong)
    )


def test_leaderboards_arrows_point_one_way():
    """No room may import, through others, a room that may import it."""

    def below(room, seen=()):
        found = set()
        for other in LEADERBOARD_ARROWS[room]:
            assert other not in seen + (room,), f"a circle of rooms: {seen + (room, other)}"
            found |= {other} | below(other, seen + (room,))
        return found

    for room in LEADERBOARD_ARROWS:
        assert room not in below(room)
    assert set(LEADERBOARD_ARROWS) == {name for name, _ in LEADERBOARD_ROOMS}


def _reads_the_database(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return [n for n in names if n.startswith(("django.db", "celery"))]


def test_the_catalogues_tables_are_pure():
    """The tables (submissions' domain reads them too) import no models, no Django database code and
    nothing of leaderboard's other rooms."""
    wrong = []
    for module, path in MODULES.items():
        if _app(module) != "leaderboard" or room_of(module, LEADERBOARD_ROOMS) != "tables":
            continue
        for target in IMPORTS[module]:
            if room_of(target, LEADERBOARD_ROOMS) != "tables":
                wrong.append(f"{module} -> {target}")
        wrong += [f"{module} -> {name}" for name in _reads_the_database(path)]
    assert not wrong, "the catalogue's tables reach outside themselves:\n" + "\n".join(
        sorted(wrong)
    )


def test_the_domain_is_pure():
    """The domain imports no models, no Django database code and nothing of the app's other rooms."""
    wrong = []
    for module, path in MODULES.items():
        if room_of(module) != "domain":
            continue
        for target in IMPORTS[module]:
            inside = _app(target) == "submissions" and room_of(target) == "domain"
            if not inside and target not in DOMAIN_MAY_IMPORT_OUTSIDE:
                wrong.append(f"{module} -> {target}")
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            wrong += [f"{module} -> {n}" for n in names if n.startswith(("django.db", "celery"))]
    assert not wrong, "the domain reaches outside itself:\n" + "\n".join(sorted(wrong))


def _circles() -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each an import circle."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in IMPORTS[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                group.append(other)
                if other == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in IMPORTS:
        if node not in index:
            visit(node)
    return groups


def test_no_import_circles():
    circles = _circles()
    assert not circles, "modules that import each other, through others or directly:\n" + "\n".join(
        " <-> ".join(group) for group in circles
    )


def test_every_package_of_the_rooms_is_on_the_map():
    page = (ROOT / "docs" / "architecture.md").read_text()
    packages = sorted(
        str(p.parent.relative_to(ROOT / app))
        for app in ("submissions", "leaderboard")
        for p in (ROOT / app).glob("*/__init__.py")
        if p.parent.name != "migrations"
    )
    missing = [name for name in packages if f"{name}/" not in page]
    assert not missing, f"docs/architecture.md does not place: {missing}"
    for name, prefixes in ROOMS + LEADERBOARD_ROOMS:
        for prefix in prefixes:
            assert (
                ROOT.joinpath(*prefix.split(".")).with_suffix(".py").exists()
                or ROOT.joinpath(*prefix.split(".")).is_dir()
            ), f"{prefix} ({name}) is not in the tree"


MOST_MODULES_AT_A_TOP = 12


def test_no_package_holds_more_than_twelve_modules_at_its_top():
    """A package past a dozen modules is split into rooms with names that say what they hold
    (issue 35: leaderboard/ had 31, portal/ 17, checking/rules/ 14); a reader finds a module by its
    room, not in a flat list."""
    crowded = []
    for top in APPS:
        for init in sorted((ROOT / top).rglob("__init__.py")):
            modules = [p for p in init.parent.glob("*.py") if p.name != "__init__.py"]
            if len(modules) > MOST_MODULES_AT_A_TOP and "migrations" not in init.parts:
                crowded.append(f"{init.parent.relative_to(ROOT)}/: {len(modules)}")
    assert not crowded, f"more than {MOST_MODULES_AT_A_TOP} modules at a package's top: {crowded}"


LONG_FUNCTION = 60  # lines, its def to its last line
MOST_LONG_FUNCTIONS_PER_1000_LINES = 0.8  # healthchecks: 0.83 (issue 35)


def long_functions() -> tuple[list[str], int]:
    """The functions of the apps over LONG_FUNCTION lines (methods and nested ones too), and the apps'
    lines of code (migrations aside: makemigrations writes them)."""
    found, lines = [], 0
    for module, path in MODULES.items():
        if _app(module) in PROGRAMS:
            continue
        text = path.read_text()
        lines += len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > LONG_FUNCTION:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {length}")
    return found, lines


def test_long_functions_stay_rare():
    """A function over 60 lines is read in more than one sitting; a few are natural (a table, a
    generator of test logs), many mean steps that want names of their own."""
    found, lines = long_functions()
    per_1000 = 1000 * len(found) / lines
    assert per_1000 < MOST_LONG_FUNCTIONS_PER_1000_LINES, (
        f"{len(found)} functions over {LONG_FUNCTION} lines in {lines} lines of the apps: "
        f"{per_1000:.2f} per 1,000, at most {MOST_LONG_FUNCTIONS_PER_1000_LINES}:\n"
        + "\n".join(found)
    )


MLPERF_ADAPTER = "submissions.checking.rules.mlperf.library"


def test_only_the_adapter_imports_mlperf_logging():
    """mlperf-logging is reached through one module (docs/architecture.md, "Cleverness"), whose pieces
    tests/checking/rules/test_mlperf_adapter.py pins; an import of it elsewhere, or a module path of it given to
    importlib, would bypass both."""
    wrong = []
    for module, path in MODULES.items():
        if module == MLPERF_ADAPTER:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [node.value] if node.value.startswith("mlperf_logging.") else []
            else:
                continue
            wrong += [f"{module}: {n}" for n in names if n.split(".")[0] == "mlperf_logging"]
    assert not wrong, "mlperf_logging reached outside the adapter:\n" + "\n".join(wrong)


def test_no_test_module_imports_another():
    """What two test modules share lives in a helper module (tests/bundles.py, tests/uploads.py,
    tests/browser/pages.py ...), never in a test module: a reader of one test module finds what it uses
    without reading another's tests, and a test module moved to another room breaks no other."""
    wrong = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        module = _module_name(path)
        package = module.split(".")[:-1]  # no test module is a package
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                named = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                source = ".".join(base + ([node.module] if node.module else []))
                named = [source] + [f"{source}.{alias.name}" for alias in node.names]
            else:
                continue
            wrong += [f"{module}: {n}" for n in named if n.split(".")[-1].startswith("test_")]
    assert not wrong, "a test module imported by another module:\n" + "\n".join(wrong)


POLICY = "leaderboard.access.policy"
# What a module reads when it decides for itself who may (docs/architecture.md, "Where 'who may' lives"):
# the user's staff and superuser flags and the rounds they review; a Viewer's fields, which say the same;
# and Django's and DRF's staff-only gates. Each is a name read, so ast finds it without running anything.
WHO_MAY_ATTRIBUTES = {
    "is_staff",
    "is_superuser",
    "reviewed_rounds",
    "staff",
    "organisations",
    "administers",
    "peer_rounds",
}
WHO_MAY_NAMES = {"staff_member_required", "IsAdminUser"}


def _who_may_reads(tree) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in WHO_MAY_ATTRIBUTES:
            found.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.Name) and node.id in WHO_MAY_NAMES:
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.alias) and node.name in WHO_MAY_NAMES:
            found.append((getattr(node, "lineno", 0), node.name))
        elif isinstance(node, ast.keyword) and (node.arg or "").startswith("memberships__"):
            # A query for the organisations a user belongs to: who acts for which.
            found.append((node.lineno, node.arg))
    return found


def test_only_the_policy_decides_who_may():
    """Who may see or do what is decided in leaderboard/access/policy.py alone: a module of the apps that reads
    a user's staff flag, the rounds they review, a Viewer's fields, or queries memberships by user is
    deciding for itself. What this does not catch: a comparison of ids (`obj.uploaded_by_id ==
    user.pk`), a membership read through a name of its own, a rule written as data; the tests of
    tests/leaderboard/test_permissions.py, through HTTP, stand behind it."""
    wrong = []
    for module, path in MODULES.items():
        if module == POLICY or module.startswith(PROGRAMS):
            continue
        for line, what in _who_may_reads(ast.parse(path.read_text(), str(path))):
            wrong.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not wrong, (
        "a module decides who may outside leaderboard/access/policy.py (move the rule there, as a function "
        "of a Viewer):\n" + "\n".join(wrong)
    )


def test_the_who_may_check_finds_what_it_names():
    """The check above, on a module written to break it: each way of deciding alone is found."""
    source = (
        "from django.contrib.admin.views.decorators import staff_member_required\n"
        "if request.user.is_staff or user.is_superuser: pass\n"
        "rounds = user.reviewed_rounds.all()\n"
        "mine = policy.viewer(user).organisations\n"
        "Organisation.objects.filter(memberships__user=user)\n"
    )
    found = {what for _, what in _who_may_reads(ast.parse(source))}
    assert found == {
        "staff_member_required",
        ".is_staff",
        ".is_superuser",
        ".reviewed_rounds",
        ".organisations",
        "memberships__user",
    }


# The apps that read the write side's rows without importing submissions (docs/architecture.md).
READ_SIDE = ("leaderboard", "notifications")
STATUS_FIELDS = {
    "status",
    "verdict",
}  # the fields of submissions' rows whose values are the vocabulary


def _spelt(node: ast.AST, constants: dict[str, bool]) -> bool:
    """Whether `node` is a string literal, a tuple, list or set holding one, or the name of a module-level
    constant bound to one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_spelt(item, constants) for item in node.elts)
    return isinstance(node, ast.Name) and constants.get(node.id, False)


def _status_spellings(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, what) where a module names a status of the write side's rows by a string: a comparison of a
    `.status` or `.verdict` with one, a query on such a field with one (status=, submission__status__in=),
    and `_meta`, the model's internals."""
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = _spelt(node.value, {})
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            fields = [s.attr for s in sides if isinstance(s, ast.Attribute)]
            if set(fields) & STATUS_FIELDS and any(_spelt(s, constants) for s in sides):
                found.append((node.lineno, f".{(set(fields) & STATUS_FIELDS).pop()} compared"))
        elif isinstance(node, ast.keyword) and node.arg:
            lookups = [part for part in node.arg.split("__") if part not in ("in", "exact")]
            if lookups and lookups[-1] in STATUS_FIELDS and _spelt(node.value, constants):
                found.append((node.lineno, f"{node.arg}="))
        elif isinstance(node, ast.Attribute) and node.attr == "_meta":
            found.append((node.lineno, "._meta"))
    return found


def test_the_read_side_names_the_write_sides_statuses_by_one_vocabulary():
    """The read side (leaderboard, notifications) reads submissions' statuses and a check's verdict by the
    vocabulary both sides import (leaderboard/statuses.py, whose classes are submissions' model choices),
    never by a string or the model's `_meta`. What this does not catch: a status spelt in a template, or
    a string passed through a name of a function's own."""
    wrong = []
    for module, path in MODULES.items():
        if not module.startswith(READ_SIDE):
            continue
        for line, what in _status_spellings(ast.parse(path.read_text(), str(path))):
            wrong.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not wrong, (
        "the read side spells a status of the write side (name it by leaderboard.statuses):\n"
        + "\n".join(wrong)
    )


def test_the_status_check_finds_what_it_names():
    """The check above, on a module written to break it: each way of spelling a status is found."""
    source = (
        'WITHDRAWN = "withdrawn"\n'
        'FINAL = ("valid", "invalid")\n'
        'if submission.status == "withdrawn": pass\n'
        "if v.verdict in FINAL: pass\n"
        "Submission.objects.exclude(status=WITHDRAWN)\n"
        'Validation.objects.filter(submission__status__in=("failed",), status="done")\n'
        "table = Submission._meta.db_table\n"
        "if price.status != CloudPrice.Status.SOURCED: pass\n"  # a name of the vocabulary: not found
    )
    found = sorted(_status_spellings(ast.parse(source)))
    assert found == [
        (3, ".status compared"),
        (4, ".verdict compared"),
        (5, "status="),
        (6, "status="),
        (6, "submission__status__in="),
        (7, "._meta"),
    ]
