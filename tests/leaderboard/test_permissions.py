"""Who sees what, asked over HTTP of a live server: every page and endpoint of portal/urls.py ×
anonymous, a member of A, a member of B, a reviewer of the round, staff × before review (open),
during review, after publication.

One live round is built from factories: organisation A (Acme) with a result and a withdrawn one,
B (Globex) with a result, findings, and in review an objection of B against A's result. Each
organisation's records carry marker words (a system's name, a bundle's name, a finding's message,
the objection's comment) that appear on whatever page shows them; a cell fails when its body holds
a marker the role may not see at that moment, when an address of something it may not see answers
other than 404 (anonymous: or the login page, 401, 403), when an API list counts more than the role
may see, or on any 5xx. Cells must show as well: a row marked `shows` answers 200 to every role that
may see the record its address names (a member their organisation's unpublished result and system
pages, a peer during review, the reviewer, staff), its bare page naming the record's system; and a
few more (the anonymous view after publication, a member's own submission), so that a portal
answering 404 to everything does not pass.

A URL of portal/urls.py without a row in ROWS fails test_every_url_has_a_row: a new page or endpoint
says here who may see it before it lands.
"""

import re
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from leaderboard.models import Result, Round, Run, Submitter, System
from submissions.models import Finding, Submission, Validation

requests = pytest.importorskip("requests")

ROLES = (
    "anonymous",
    "member_a",
    "member_b",
    "reviewer",
    "staff",
    "member_f",
    "member_x",
    "member_j",
    "invited_a",
    "removed_a",
)
# Members of organisations that did not really submit: F's only submission failed (nothing in it could
# be read), X's only one is withdrawn, J's is invalid with no result scored (a junk bundle: issue 34).
# None takes part in peer review (leaderboard/access/policy.py, "who takes part in a round's review").
NON_SUBMITTERS = {"member_f": "f", "member_x": "x", "member_j": "j"}
PHASES = ("open", "review", "published")

# Words that only the pages about one owner's records may hold.
MARKERS = {
    "a": ("SYSNAME-A-7Q", "BUNDLE-A-7Q", "FINDING-A-7Q"),
    "b": ("SYSNAME-B-4K", "BUNDLE-B-4K", "FINDING-B-4K"),
    "w": ("SYSNAME-W-3P",),  # A's withdrawn result's system: never public
    "objection": ("OBJECTION-5T",),
    "f": ("BUNDLE-F-9J",),  # F's failed submission
    "x": ("BUNDLE-X-2V",),  # X's withdrawn submission
    "j": ("BUNDLE-J-8R",),  # J's junk submission: invalid, nothing scored
}
BENCHMARK = "bert"
# The signed-in user's name in the site header (templates/base.html); the roles' usernames are their names.
ACCOUNT = re.compile(r'<form class="account"[^>]*>.*?<span>([^<]*)</span>', re.S)


def may_see(role: str, owner: str, phase: str) -> bool:
    """The rule under test. Reviewers and staff see the whole round at every moment; a member sees
    their organisation's records, and during review the other submitters' (peer review); everyone
    sees what is published; a withdrawn result and the objections are never public. A failed or
    withdrawn submission is never public; the peers read it in review like any other."""
    if role in ("reviewer", "staff"):
        return True
    if role == "anonymous":
        return phase == "published" and owner in ("a", "b")
    if role in ("invited_a", "removed_a"):  # no member (not yet, no longer): what is public
        return phase == "published" and owner in ("a", "b")
    if role in NON_SUBMITTERS:  # no peer review: their own submission and what is public
        return owner == NON_SUBMITTERS[role] or (phase == "published" and owner in ("a", "b"))
    if owner in ("f", "x", "j"):
        return phase == "review"
    own = "a" if role == "member_a" else "b"
    if owner == "objection":
        return True  # B filed it against A: both are parties
    if owner in (own, "w" if own == "a" else None):
        return True
    return phase == "review" or (phase == "published" and owner in ("a", "b"))


# -- the rows: one per URL name of portal/urls.py ------------------------------------------------
#
# kind: whose records the URL's parameters name ("result", "system", "submission", "objection",
# "round"), filled for each owner; None: a URL without parameters. query: query strings to ask as
# well as the bare URL. counts: an API list whose "count" may not pass what the role may see of that
# kind. shows: every role that may see the record answers 200, the bare URL with the record's system
# name. skip: why the URL is not asked (a form's POST target). roles: who asks (all, unless said).


@dataclass
class Row:
    kind: str | None = None
    query: tuple[str, ...] = ("",)
    counts: str = ""
    shows: bool = False
    skip: str = ""
    extra: dict = field(default_factory=dict)
    roles: tuple[str, ...] = ROLES


POST_ONLY = "answers POST only: a GET is refused before anything is read"
ROWS = {
    # leaderboard: public pages, exports and chart data (the round page holds its charts' data)
    "leaderboard:home": Row(query=("", "?q=SYSNAME", "?q=sys", "?q=Acme")),  # with search
    "leaderboard:progress": Row(query=("", "?division=closed&organisation=Acme")),
    "leaderboard:rounds": Row(),
    # An organisation's page holds its public results only, whoever asks.
    "leaderboard:organisation": Row(
        extra={"paths": ("/organisations/Acme/", "/organisations/Globex/")}
    ),
    "client-archive": Row(),  # the submitters' client, the same for everyone
    "leaderboard:round": Row(
        kind="round",
        query=("", "?format=csv", "?format=json", "?partial=1", "?division=closed&sort=bert"),
    ),
    "leaderboard:compare": Row(kind="round", query=("?s=Acme/a-sys&s=Globex/b-sys",)),
    # A system's and a result's pages show an unpublished one to whoever may see its submission.
    "leaderboard:system": Row(kind="system", shows=True),
    "leaderboard:result": Row(kind="result", query=("", "?format=csv", "?format=json"), shows=True),
    "leaderboard:public-id": Row(kind="result"),
    # The bundles are not stored: a log the role may read answers 404 saying so (tests/leaderboard/test_visibility.py).
    "leaderboard:run-log": Row(kind="result", query=("", "?line=3", "?format=raw")),
    "leaderboard:run-log-raw": Row(kind="result"),  # the log file itself, to whoever sees its page
    # submissions
    "submissions:list": Row(),
    "submissions:upload": Row(),
    "submissions:detail": Row(kind="submission"),
    "submissions:receipt": Row(kind="submission"),
    "submissions:progress": Row(kind="submission"),
    "submissions:findings": Row(kind="submission"),
    "submissions:revalidate": Row(kind="submission", skip=POST_ONLY),
    "submissions:reference-check": Row(kind="submission", skip=POST_ONLY),
    "submissions:rounds": Row(),
    "submissions:publish-round": Row(kind="round", skip=POST_ONLY),
    "submissions:import-round": Row(kind="round", skip=POST_ONLY),
    "accounts:tokens": Row(),
    "accounts:revoke-token": Row(skip=POST_ONLY),
    "accounts:organisation": Row(
        skip="an organisation's members, no round data: members 200, others 404 (tests/accounts/test_members.py)"
    ),
    "accounts:membership": Row(skip=POST_ONLY),
    "accounts:invitation": Row(skip=POST_ONLY),
    # review
    "review:index": Row(),
    "review:round": Row(kind="round"),
    "review:objection": Row(kind="objection"),
    "review:reply": Row(kind="objection", skip=POST_ONLY),
    "review:decide": Row(kind="objection", skip=POST_ONLY),
    "review:new-objection": Row(kind="submission"),
    "review:withdraw": Row(kind="submission", skip=POST_ONLY),
    # API v1 (its lists are counted)
    "v1:api-root": Row(),
    "v1:round-list": Row(),
    "v1:round-detail": Row(kind="round"),
    "v1:system-list": Row(counts="system", query=("", "?round=training-live")),
    "v1:system-detail": Row(kind="system", shows=True),
    "v1:result-list": Row(counts="result", query=("", "?round=training-live", "?format=csv")),
    "v1:result-detail": Row(kind="result", shows=True),  # by uid before publication
    "v1:result-runs": Row(kind="result"),
    "v1:price-list": Row(),
    "v1:price-detail": Row(skip="price lines are public catalogue data, no round's results"),
    "v1:objection-list": Row(counts="objection", query=("", "?round=training-live")),
    "v1:objection-detail": Row(kind="objection"),
    "v1:objection-reply": Row(kind="objection", skip=POST_ONLY),
    "v1:objection-decide": Row(kind="objection", skip=POST_ONLY),
    "v1:submission-withdraw-withdraw": Row(kind="submission", skip=POST_ONLY),
    "v1:reference-check-list": Row(query=("", "?round=training-live")),
    "v1:reference-check-detail": Row(skip="this round has no reference checks to address"),
    "v1:agent-list": Row(),
    "v1:agent-detail": Row(skip="an agent is a GPU host: no round data"),
    "agents": Row(),
    "api-docs": Row(),
    "redoc-bundle": Row(),  # the API docs' script, the same for everyone
    "favicon.ico": Row(extra={"paths": ("/favicon.ico",)}),  # a redirect to the site's icon
    "javascript-catalog": Row(),  # the pages' scripts' translations, no round data
    "v1:submission-list": Row(counts="submission", query=("", "?round=training-live")),
    "v1:submission-detail": Row(kind="submission"),
    "v1:submission-findings": Row(kind="submission"),
    "v1:upload-list": Row(),
    "v1:upload-detail": Row(
        skip="a chunked upload under way is its uploader's; none in this round"
    ),
    "v1:upload-complete": Row(skip=POST_ONLY),
    "v1:token-list": Row(),
    "v1:token-detail": Row(
        skip="a user's own API token, no round data (tests/accounts/test_tokens.py)"
    ),
    "schema": Row(roles=("anonymous", "staff")),  # no round data; 0.4 s a request
    "api/^(?P<rest>((rounds|systems|results|prices)/.*)?)$": Row(
        skip="a redirect to the same path under /api/v1/, asked there"
    ),
    "api/^(?P<rest>.*)$": Row(extra={"paths": ("/api/nothing-here/",)}),
    # notifications/ (a user's own) and the read side's Atom feeds (the public's, whoever asks)
    "leaderboard:round-feed": Row(kind="round"),
    "leaderboard:benchmark-feed": Row(extra={"paths": ("/feeds/benchmarks/bert/",)}),
    "leaderboard:organisation-feed": Row(
        extra={"paths": ("/feeds/organisations/Acme/", "/feeds/organisations/Globex/")}
    ),
    "notifications:list": Row(),
    "notifications:preferences": Row(),
    "notifications:read": Row(skip=POST_ONLY),
    "notifications:unsubscribe": Row(skip="a mailed link's signed form: holds no round data"),
    "v1:notification-list": Row(),
    "v1:notification-read": Row(skip=POST_ONLY),
    "v1:notification-preference-list": Row(),
    "v1:notification-preference-detail": Row(skip="a user's own preference: no round data"),
    "v1:notification-preference-language": Row(skip="a user's own language: no round data"),
    "v1:webhook-list": Row(),
    "v1:webhook-detail": Row(
        skip="an organisation's own webhook, no round data (tests/notifications/test_webhooks.py)"
    ),
    "v1:webhook-deliveries": Row(
        skip="an organisation's own webhook, no round data (tests/notifications/test_webhooks.py)"
    ),
    # Django's own
    "login": Row(),
    "logout": Row(skip=POST_ONLY),
    "password_change": Row(),
    "password_change_done": Row(),
    "password_reset": Row(),
    "password_reset_done": Row(),
    "password_reset_confirm": Row(skip="a mailed link's form: holds no round data"),
    "password_reset_complete": Row(),
    "admin:*": Row(extra={"paths": ("/admin/", "/admin/submissions/submission/")}),
}


def _walk(patterns, prefix="", namespace=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = namespace + (f"{pattern.namespace}:" if pattern.namespace else "")
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern), inner)
        elif namespace.startswith("admin:"):
            yield "admin:*", pattern
        elif isinstance(pattern, URLPattern):
            yield (
                (namespace + pattern.name if pattern.name else prefix + str(pattern.pattern)),
                pattern,
            )


def surface() -> dict[str, URLPattern]:
    """Every URL name of portal/urls.py (an unnamed one by its route), the admin's as one."""
    return dict(_walk(get_resolver().url_patterns))


def test_every_url_has_a_row():
    missing = sorted(set(surface()) - set(ROWS))
    assert not missing, (
        "URLs without a row in tests/leaderboard/test_permissions.py ROWS (say who may see them): "
        + ", ".join(missing)
    )


# -- the round ---------------------------------------------------------------------------------


@dataclass
class World:
    round: Round
    submissions: dict  # owner -> Submission
    systems: dict  # owner -> System
    results: dict  # owner -> Result
    objection: object = None
    upload: object = None  # removed_a's, open
    removed_token: str = ""


def _build(cast) -> World:
    from leaderboard.catalogue.rounds import load_round

    round_ = load_round(
        {
            "key": "training-live",
            "name": "Training live",
            "ruleset": "5.1.0",
            "log_format": "mllog",
            "benchmarks": [
                {"key": BENCHMARK, "name": "BERT", "required_runs": 3, "reference_time_s": 3000.0}
            ],
        }
    )
    round_.reviewers.add(cast["reviewer"])
    world = World(round_, {}, {}, {})
    for owner, org, member in (("a", cast["a"], "member_a"), ("b", cast["b"], "member_b")):
        submitter, _ = Submitter.objects.get_or_create(name=org.name)
        submission = Submission.objects.create(
            round=round_,
            submitter=submitter,
            organisation=org,
            uploaded_by=cast[member],
            bundle=f"bundles/{owner}.tgz",
            original_name=f"{MARKERS[owner][1]}.tgz",
            sha256=owner * 64,
            size=1,
            status=Submission.Status.VALID,
        )
        validation = Validation.objects.create(
            submission=submission,
            number=1,
            status=Validation.Status.DONE,
            verdict="valid",
            scored=2 if owner == "a" else 1,
        )
        world.submissions[owner] = submission
        systems = [(owner, f"{owner}-sys")] + ([("w", "w-sys")] if owner == "a" else [])
        for who, key in systems:
            system = System.objects.create(
                submission=submission,
                round=round_,
                submitter=submitter,
                key=key,
                name=MARKERS[who][0],
                division="closed",
                category="onprem",
                accelerator_model="NVIDIA H100-SXM5-80GB",
                accelerator_count=8,
            )
            result = Result.objects.create(
                system=system,
                benchmark=round_.benchmarks.get(key=BENCHMARK),
                path=f"results/{key}/{BENCHMARK}",
                score_s=1200.0,
                speedup=2.5,
                runs_counted=1,
                withdrawn=who == "w",
                warning_count=1,
            )
            for i in range(3):
                Run.objects.create(
                    result=result,
                    index=i,
                    path=f"results/{key}/{BENCHMARK}/result_{i}.txt",
                    checked=True,
                    success=True,
                    time_to_train_s=1200.0 + i,
                    counted=i == 1,
                    dropped=i != 1,
                )
            world.systems[who], world.results[who] = system, result
        Finding.objects.create(
            validation=validation,
            result=world.results[owner],
            system_key=f"{owner}-sys",
            benchmark=BENCHMARK,
            severity=Finding.Severity.WARNING,
            rule="test.marker",
            file=f"results/{owner}-sys/{BENCHMARK}/result_0.txt",
            line=1,
            message=MARKERS[owner][2],
        )
    _non_submitters(round_, cast, world)
    _invitations(cast)
    _removed_member(round_, cast, world)
    return world


def _invitations(cast) -> None:
    """invited_a has an invitation to Acme, not accepted; Acme's admin tried to draft the round's
    reviewer too (refused: the reviewer must stay free to decide objections against Acme)."""
    from django.contrib.auth import get_user_model

    from accounts import members

    cast["invited_a"] = get_user_model().objects.create_user("invited_a", password="pw")
    assert members.invite(cast["admin_a"], cast["a"], "invited_a", "member") is not None
    assert members.invite(cast["admin_a"], cast["a"], "reviewer", "admin") is None


def _removed_member(round_: Round, cast, world: World) -> None:
    """removed_a opened an upload for Acme, then was removed from Acme; the upload stays open."""
    from django.contrib.auth import get_user_model

    from accounts import tokens
    from accounts.models import Membership
    from submissions.models import Upload

    user = cast["removed_a"] = get_user_model().objects.create_user("removed_a", password="pw")
    membership = Membership.objects.create(user=user, organisation=cast["a"])
    world.upload = Upload.objects.create(
        round=round_, uploaded_by=user, organisation=cast["a"], name="late.tgz", size=10
    )
    membership.delete()
    world.removed_token = tokens.issue(user, "ci")[1]


def _non_submitters(round_: Round, cast, world: World) -> None:
    """F (Initech), X (Umbrella) and J (Hooli), each with a member and one submission that does not
    count: J's was checked (it was read) and scored nothing."""
    from django.contrib.auth import get_user_model

    from accounts.models import Membership, Organisation

    for role, owner, org, status in (
        ("member_f", "f", "Initech", Submission.Status.FAILED),
        ("member_x", "x", "Umbrella", Submission.Status.WITHDRAWN),
        ("member_j", "j", "Hooli", Submission.Status.INVALID),
    ):
        organisation = Organisation.objects.create(name=org)
        cast[role] = get_user_model().objects.create_user(role, password="pw")
        Membership.objects.create(user=cast[role], organisation=organisation)
        world.submissions[owner] = Submission.objects.create(
            round=round_,
            organisation=organisation,
            uploaded_by=cast[role],
            bundle=f"bundles/{owner}.tgz",
            original_name=f"{MARKERS[owner][0]}.tgz",
            sha256=owner * 64,
            size=14,
            status=status,
        )
        if status == Submission.Status.INVALID:  # checked: one result, scored by nothing
            Validation.objects.create(
                submission=world.submissions[owner],
                number=1,
                status=Validation.Status.DONE,
                verdict="invalid",
                errors=1,
                scored=0,
            )


def _set_phase(world: World, phase: str, cast) -> None:
    """The round's calendar around the real clock (the live server reads it), and what each phase
    brings: an objection in review, publication at the end."""
    from submissions.review import objections as review

    now = timezone.now()
    hour = timedelta(hours=1)
    dates = {
        "open": (now - 24 * hour, now + 24 * hour, now + 48 * hour, now + 72 * hour),
        "review": (now - 48 * hour, now - hour, now + 24 * hour, now + 48 * hour),
        "published": (
            now - 72 * hour,
            now - 48 * hour,
            now - 24 * hour,
            now - timedelta(minutes=1),
        ),
    }[phase]
    Round.objects.filter(pk=world.round.pk).update(
        opens_at=dates[0], deadline_at=dates[1], review_ends_at=dates[2], publish_at=dates[3]
    )
    world.round.refresh_from_db()
    if phase == "open":
        return
    if phase == "review":
        world.objection = review.file_objection(
            cast["member_b"],
            world.submissions["a"],
            system_key="a-sys",
            benchmark_key=BENCHMARK,
            rule="5.1 closed division: hyperparameters",
            comment=MARKERS["objection"][0],
        )
        return
    # Published: the objection was filed in review (then answered and decided), and the round went
    # public at its minute.
    world.objection = _objection_filed_in_review(world, cast)
    _publish(world.round)


def _objection_filed_in_review(world: World, cast):
    from submissions.review.models import Objection

    return Objection.objects.create(
        round=world.round,
        submission=world.submissions["a"],
        system=world.systems["a"],
        result=world.results["a"],
        from_organisation=cast["b"],
        against_organisation=cast["a"],
        filed_by=cast["member_b"],
        rule="5.1 closed division: hyperparameters",
        comment=MARKERS["objection"][0],
        status=Objection.Status.DECIDED,
        decision=Objection.Decision.ACCEPTED,
        decided_by=cast["reviewer"],
        decided_at=timezone.now(),
    )


def _publish(round_: Round) -> None:
    from submissions.checking.pipeline.publication import publish_due_rounds

    assert publish_due_rounds(now=timezone.now()) == [round_.key]


# -- asking --------------------------------------------------------------------------------------


def _value(param: str, kind: str, obj, world: World) -> str:
    """A URL parameter for one owner's record: what the portal's own links would hold."""
    if param in ("round_key", "key") and kind == "round":
        return world.round.key
    if param == "round_key":
        return world.round.key
    if kind == "objection":
        return str(obj.uid)
    system = obj if kind == "system" else getattr(obj, "system", None)
    if param == "submitter":
        return system.submitter.name
    if param == "system_key":
        return system.key
    if param == "benchmark_key":
        return BENCHMARK
    if param == "public_id":  # the API finds a result by uid before it has a public id
        return obj.public_id or str(obj.uid)
    if param in ("uid", "submission_uid"):
        return str(obj.uid)
    if param == "index":
        return "0"
    if param == "pk":
        return str(obj.pk)
    raise KeyError(f"no value for URL parameter {param!r} of a {kind}")


def _targets(name: str, row: Row, world: World) -> list[tuple[str, str | None]]:
    """(path, owner) for each address the row asks; owner None: a URL of no one's records."""
    from django.urls import reverse

    if row.extra.get("paths"):
        return [(p, None) for p in row.extra["paths"]]
    owners = {
        None: [(None, None)],
        "round": [(None, world.round)],
        "submission": [(o, world.submissions[o]) for o in ("a", "b", "f", "x", "j")],
        "system": [(o, world.systems[o]) for o in ("a", "b", "w")],
        "result": [(o, world.results[o]) for o in ("a", "b", "w")],
        "objection": [("objection", world.objection)] if world.objection else [],
    }[row.kind]
    pattern = surface()[name]
    params = list(pattern.pattern.converters) or re.findall(r"\(\?P<(\w+)>", str(pattern.pattern))
    params = [p for p in params if p != "format"]
    out = []
    for owner, obj in owners:
        kwargs = {p: _value(p, row.kind, obj, world) for p in params}
        path = reverse(name, kwargs=kwargs)
        out += [(path + query, owner) for query in row.query]
    return out


def _sessions(live_server, cast) -> dict:
    from django.test import Client

    sessions = {}
    for role in ROLES:
        session = requests.Session()
        # Not from the environment: requests reads the proxy settings there for every request (a scan of
        # os.environ each time), about 4% of this test's own CPU for its ~2,800 requests a phase.
        session.trust_env = False
        if role != "anonymous":
            client = Client()
            client.force_login(cast[role])
            session.cookies.set("sessionid", client.cookies["sessionid"].value)
        sessions[role] = session
    return sessions


def _allowed_count(kind: str, role: str, phase: str, world: World) -> int:
    owners = {
        "result": ("a", "b", "w"),
        "system": ("a", "b", "w"),
        "submission": ("a", "b", "f", "x", "j"),
        "objection": ("objection",) if world.objection else (),
    }[kind]
    return sum(may_see(role, owner, phase) for owner in owners)


def _check(response, path, role, owner, phase, row, world) -> list[str]:
    cell = f"{phase} × {role} × GET {path}"
    if response.status_code >= 500:
        return [f"{cell}: {response.status_code}"]
    problems = []
    body = response.text
    for who, words in MARKERS.items():
        if not may_see(role, who, phase):
            problems += [f"{cell}: shows {word} ({who})" for word in words if word in body]
    # A cached page must not carry another viewer's site header (their name, CSRF token, staff links).
    header = ACCOUNT.search(body)
    signed_in = header[1] if header else None
    if signed_in is not None and signed_in != role:
        problems.append(f"{cell}: the site header is {signed_in}'s")
    if row.shows and owner is not None and may_see(role, owner, phase):
        name = MARKERS[owner][0]
        if response.status_code != 200:
            problems.append(f"{cell}: answers {response.status_code}, not 200, for {owner}'s")
        elif "?" not in path and name not in body:
            problems.append(f"{cell}: does not name {owner}'s system {name}")
        # Shown before it is public: the page says so, and no cache keeps it for another viewer.
        hidden = phase != "published" or owner == "w"
        if "text/html" in response.headers.get("Content-Type", "") and hidden != (
            "<strong>Not public</strong>" in body
        ):
            problems.append(f"{cell}: {'lacks' if hidden else 'shows'} the not-public notice")
        cache_control = response.headers.get("Cache-Control", "")
        if path.startswith("/r/") and hidden != ("no-store" in cache_control):
            problems.append(f"{cell}: Cache-Control {cache_control!r}")
        if path.startswith("/api/") and hidden and "private" not in cache_control:
            problems.append(f"{cell}: Cache-Control {cache_control!r}, not private")
    if owner is not None and not may_see(role, owner, phase):
        refused = {404} | ({401, 403} if role == "anonymous" else set())
        login = response.status_code == 302 and "/login/" in response.headers.get("Location", "")
        if response.status_code not in refused and not login:
            problems.append(f"{cell}: answers {response.status_code}, not 404, for {owner}'s")
    if (
        row.counts
        and response.status_code == 200
        and "json" in response.headers.get("Content-Type", "")
    ):
        count = response.json().get("count")
        allowed = _allowed_count(row.counts, role, phase, world)
        if count is not None and count > allowed:
            problems.append(f"{cell}: counts {count} {row.counts}s; at most {allowed} may be seen")
    return problems


def _must_show(base, sessions, world, phase) -> list[str]:
    """Cells that must show something, so that a portal refusing everything does not pass."""
    problems = []

    def get(role, path):
        return sessions[role].get(base + path, allow_redirects=False, timeout=30)

    own = get("member_a", f"/submissions/{world.submissions['a'].uid}/")
    if own.status_code != 200 or MARKERS["a"][1] not in own.text:
        problems.append(f"{phase}: member_a does not see A's own submission ({own.status_code})")
    for role, owner in NON_SUBMITTERS.items():  # their own submission, failed or withdrawn
        mine = get(role, f"/submissions/{world.submissions[owner].uid}/")
        if mine.status_code != 200 or MARKERS[owner][0] not in mine.text:
            problems.append(
                f"{phase}: {role} does not see their own submission ({mine.status_code})"
            )
    if phase == "review":  # peer review: the other submitters read A's submission
        peer = get("member_b", f"/submissions/{world.submissions['a'].uid}/")
        if peer.status_code != 200 or MARKERS["a"][1] not in peer.text:
            problems.append(f"review: member_b does not see A's submission ({peer.status_code})")
    # A member removed from Acme goes on with none of the upload they opened for it.
    part = requests.patch(
        f"{base}/api/v1/uploads/{world.upload.uid}/",
        data=b"0123456789",
        headers={
            "Authorization": f"Token {world.removed_token}",
            "Upload-Offset": "0",
            "Content-Type": "application/offset+octet-stream",
        },
        timeout=30,
    )
    if part.status_code != 403 or "not a member of Acme" not in part.text:
        problems.append(f"{phase}: removed_a's open upload takes a part ({part.status_code})")
    if phase == "review":  # the reviewer Acme tried to draft still decides B's objection against A
        objection = get("reviewer", f"/review/objections/{world.objection.uid}/")
        if f"/review/objections/{world.objection.uid}/decide/" not in objection.text:
            problems.append(f"review: the reviewer may not decide ({objection.status_code})")
    theirs = get("reviewer", f"/submissions/{world.submissions['b'].uid}/")
    if theirs.status_code != 200 or MARKERS["b"][1] not in theirs.text:
        problems.append(f"{phase}: the reviewer does not see B's submission ({theirs.status_code})")
    if world.objection is not None:
        for role in ("member_a", "member_b", "reviewer"):
            listed = get(role, "/api/v1/objections/?round=training-live").json().get("count")
            if listed != 1:
                problems.append(f"{phase}: {role} lists {listed} objections, not the 1 filed")
    review_page = get("reviewer", f"/review/{world.round.key}/")
    if review_page.status_code != 200:
        problems.append(f"{phase}: the reviewer's review page answers {review_page.status_code}")
    if phase == "published":
        page = get("anonymous", f"/r/{world.round.key}/").text
        csv = get("anonymous", f"/r/{world.round.key}/?format=csv").text
        api = get("anonymous", "/api/v1/results/?round=training-live").json()
        for word in (MARKERS["a"][0], MARKERS["b"][0]):
            if word not in page or word not in csv:
                problems.append(f"published: the anonymous round page or CSV lacks {word}")
        if api.get("count") != 2:
            problems.append(
                f"published: the anonymous API counts {api.get('count')} results, not 2"
            )
    return problems


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("phase", PHASES)
def test_who_sees_what(phase, live_server, cast):
    world = _build(cast)
    _set_phase(world, phase, cast)
    sessions = _sessions(live_server, cast)
    base = live_server.url
    problems = []
    for name, row in ROWS.items():
        if row.skip or name not in surface():
            continue
        for path, owner in _targets(name, row, world):
            for role in row.roles:
                response = sessions[role].get(base + path, allow_redirects=False, timeout=30)
                problems += _check(response, path, role, owner, phase, row, world)
    problems += _must_show(base, sessions, world, phase)
    assert not problems, f"{len(problems)} cells show what they must not:\n" + "\n".join(problems)
