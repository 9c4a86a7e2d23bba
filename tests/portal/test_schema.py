"""The API against its own OpenAPI schema, through HTTP: schemathesis reads /api/schema/ from the
live server and sends generated requests to every operation, anonymous and with an API token.
No answer may be a 5xx, and every answer must match what the schema says of it (status, content
type, body). Bounded: a few examples per operation, so the whole test takes seconds.
"""

import pytest

from .. import leaderboard_factories as make

# Every test here commits its writes: the live server reads the test's rows.
pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = 5  # per operation and per client


@pytest.fixture
def catalogue(rounds, cast):
    """Published results with public ids and runs, one with findings, one not scored, one unpublished
    of organisation A, and a price line: every serializer path has something to say."""
    v51 = rounds["training-v5.1"]
    alpha = make.system(v51, "Acme", "alpha", category="cloud")
    make.result(alpha, "retinanet", 10, runs=5, public_id="5.1-0001")
    make.result(alpha, "rgat", 12, runs=3, public_id="5.1-0002", warning_count=1)
    make.result(
        alpha, "llama31_8b", 20, runs=3, public_id="5.1-0003", power_result=True, energy_j=7e6
    )
    make.result(make.system(v51, "Globex", "beta"), "rgat", None, score_message="2 runs failed")
    make.result(make.system(v51, "Acme", "draft", published=False), "rgat", 9, published=False)
    from leaderboard.models import CloudPrice

    CloudPrice.objects.create(round=v51, reference=True, provider="P", instance="1 GPU")
    return v51


def _clients(cast):
    from accounts.tokens import issue

    _, key = issue(cast["member_a"], "schemathesis")
    return {"anonymous": {}, "token": {"Authorization": f"Token {key}"}}


def _checker(operation, base_url: str, clients: dict):
    """A hypothesis test of one operation: each generated request sent once per client."""
    from hypothesis import HealthCheck, given, settings
    from schemathesis import checks

    verify = [
        checks.not_a_server_error,
        checks.status_code_conformance,
        checks.content_type_conformance,
        checks.response_schema_conformance,
    ]

    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        # The same examples every run, so that CI is not a lottery; `make fuzz` is where we explore.
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def check(case):
        for who, headers in clients.items():
            try:
                case.call_and_validate(base_url=base_url, headers=headers, checks=verify)
            except Exception as error:
                raise AssertionError(f"{who}: {operation.label}: {error}") from error

    return check


def test_every_operation_answers_as_its_schema_says(live_server, catalogue, cast):
    schemathesis = pytest.importorskip("schemathesis")

    # A chunk of a resumable upload (tus) is raw bytes, as application/octet-stream is.
    schemathesis.serializer.alias("application/offset+octet-stream", "application/octet-stream")
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert any(op.path == "/api/v1/results/" for op in operations)
    clients = _clients(cast)
    for operation in operations:
        _checker(operation, live_server.url, clients)()
