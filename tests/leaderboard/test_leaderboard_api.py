"""The read API v1: published rows only, the table's filters, ids, runs, CSV, conditional and
cached answers, throttling, fixed query counts, the schema and its docs, the API root, and the
paths of before v1."""

import csv
import inspect
import io

import pytest

from leaderboard.cache import invalidate_round

from .. import leaderboard_factories as make

pytestmark = pytest.mark.django_db


@pytest.fixture
def v51(rounds):
    return rounds["training-v5.1"]


def fill(round_, systems, prefix="s"):
    for i in range(systems):
        s = make.system(
            round_,
            f"Org{i % 4}",
            f"{prefix}{i}",
            accelerator_count=8 * (i + 1),
            category="cloud" if i % 2 else "onprem",
        )
        for bench in ("retinanet", "rgat"):
            make.result(s, bench, 10 + i, runs=0)


def test_the_results_list_holds_published_results_only(client, v51):
    fill(v51, 2)
    make.result(
        make.system(v51, "Hidden", "zeta", published=False), "retinanet", 1, published=False
    )
    make.result(make.system(v51, "Blocked", "beta"), "retinanet", 1, error_count=3)
    body = client.get("/api/v1/results/").json()
    assert body["count"] == 4
    assert {r["submitter"] for r in body["results"]} == {"Org0", "Org1"}
    first = body["results"][0]
    assert first["round"] == "training-v5.1" and first["benchmark"] == "rgat"
    assert (
        first["score_minutes"] == 10.0
        and first["url"] == "http://testserver/r/training-v5.1/Org0/s0/rgat/"
    )


def test_ids_are_uids_and_public_ids_never_primary_keys(client, v51):
    result = make.result(make.system(v51, "Acme", "alpha"), "rgat", 10, public_id="5.1-0042")
    row = client.get("/api/v1/results/").json()["results"][0]
    assert "id" not in row and "system_id" not in row
    assert (row["public_id"], row["uid"], row["system_uid"]) == (
        "5.1-0042",
        str(result.uid),
        str(result.system.uid),
    )
    assert row["api_url"] == "http://testserver/api/v1/results/5.1-0042/"
    system = client.get("/api/v1/systems/").json()["results"][0]
    assert "id" not in system and system["uid"] == str(result.system.uid)
    assert client.get(f"/api/v1/systems/{result.system.uid}/").json()["key"] == "alpha"
    assert client.get(f"/api/v1/systems/{result.system.pk}/").status_code == 404


@pytest.mark.parametrize(
    "query, count",
    [
        ("round=training-v5.1", 8),
        ("round=training-v0.5", 0),
        ("benchmark=rgat", 4),
        ("category=cloud", 4),
        ("category=cloud&category=onprem", 8),  # repeated, as the page's checkboxes send it
        ("submitter=org1", 2),
        ("submitter=org1&submitter=Org2", 4),
        ("accelerators_min=16&accelerators_max=24", 4),
        ("acc_min=16&acc_max=24", 4),
        ("q=org3", 2),
        ("accelerator=h100", 8),
        ("accelerator=mi300&accelerator=h100", 8),
        ("accelerator=mi300", 0),
        ("accelerator=family:NVIDIA H100", 8),
        ("accelerator=family:NVIDIA GB300", 0),
        ("accelerator=family:NVIDIA GB300&accelerator=family:NVIDIA H100", 8),
        ("framework=family:PyTorch", 8),
        ("framework=family:NeMo", 0),
        ("has_findings=true", 0),
    ],
)
def test_results_filter_like_the_table(client, v51, query, count):
    fill(v51, 4)
    assert client.get(f"/api/v1/results/?{query}").json()["count"] == count


def test_results_order_by_score(client, v51):
    fill(v51, 3)
    scores = [
        r["score_minutes"]
        for r in client.get("/api/v1/results/?benchmark=rgat&ordering=-score").json()["results"]
    ]
    assert scores == [12.0, 11.0, 10.0]


def test_a_result_by_public_id_holds_its_runs_and_findings(client, v51):
    result = make.result(
        make.system(v51, "Acme", "alpha"), "retinanet", 10, runs=5, public_id="5.1-0007"
    )
    result.warning_count = 2
    result.save()
    from submissions.models import Finding, Validation

    validation = Validation.objects.create(
        submission=result.system.submission, number=1, status=Validation.Status.DONE
    )
    for line in (3, 9):
        Finding.objects.create(
            validation=validation,
            result=result,
            severity=Finding.Severity.WARNING,
            rule="run.not-successful",
            file=f"{result.path}/result_1.txt",
            line=line,
            message="run_stop status is 'aborted'",
        )
    body = client.get("/api/v1/results/5.1-0007/").json()
    assert body["public_id"] == "5.1-0007" and body["findings"] == "2 warnings"
    assert body["findings_summary"] == (
        "The checks found 2 warnings: runs that did not finish successfully (2). "
        "None of them holds the result back."
    )
    assert [(f["line"], f["kind"]) for f in body["findings_list"]] == [
        (3, "runs that did not finish successfully"),
        (9, "runs that did not finish successfully"),
    ]
    listed = client.get("/api/v1/results/").json()["results"][0]
    assert listed["findings_summary"] == body["findings_summary"]
    assert [r["index"] for r in body["runs"]] == [0, 1, 2, 3, 4]
    runs = client.get("/api/v1/results/5.1-0007/runs/").json()
    assert [r["index"] for r in runs] == [0, 1, 2, 3, 4] and runs[0]["dropped"] is True
    # A result that has no public id (yet) is found by its uid.
    other = make.result(make.system(v51, "Acme", "beta"), "retinanet", 11)
    assert client.get(f"/api/v1/results/{other.uid}/").json()["uid"] == str(other.uid)


def test_an_unpublished_result_is_not_found_by_any_id(client, v51):
    hidden = make.result(
        make.system(v51, "Hidden", "z", published=False),
        "retinanet",
        1,
        published=False,
        runs=5,
        public_id="5.1-0099",
    )
    for path in ("5.1-0099/", "5.1-0099/runs/", f"{hidden.uid}/", f"{hidden.pk}/"):
        response = client.get(f"/api/v1/results/{path}")
        assert response.status_code == 404, path
        assert "Hidden" not in response.content.decode()


def test_systems_rounds_and_prices(client, v51):
    fill(v51, 2)
    make.system(v51, "Hidden", "zeta", published=False)
    systems = client.get("/api/v1/systems/?round=training-v5.1").json()
    assert [s["key"] for s in systems["results"]] == ["s0", "s1"]
    rounds = client.get("/api/v1/rounds/").json()["results"]
    # Every round file: the published MLPerf Training rounds v0.5 to v5.1, with results or without.
    assert {r["key"] for r in rounds} == {
        f"training-v{v}" for v in "0.5 0.6 0.7 1.0 1.1 2.0 2.1 3.0 3.1 4.0 4.1 5.0 5.1".split()
    }
    v05 = client.get("/api/v1/rounds/training-v0.5/").json()
    assert v05["benchmarks"][0] == {
        "key": "resnet",
        "name": "Image classification (ResNet-50 v1.5, ImageNet)",
        "quality_target": 0.749,
        "higher_is_better": True,
        "required_runs": 5,
        "reference_time_s": 529877.0,
    }
    assert v05["results_url"] == "http://testserver/api/v1/results/?round=training-v0.5"
    prices = client.get("/api/v1/prices/?round=training-v0.5").json()["results"]
    assert all("id" not in p for p in prices)


def test_the_openapi_schema_describes_the_endpoints(client, rounds):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    schema = response.json()
    paths = schema["paths"]
    assert "/api/v1/results/" in paths and "/api/v1/results/{public_id}/runs/" in paths
    params = {p["name"] for p in paths["/api/v1/results/"]["get"]["parameters"]}
    assert {
        "round",
        "benchmark",
        "division",
        "category",
        "submitter",
        "accelerator",
        "acc_min",
        "q",
        "page",
        "ordering",
        "format",
    } <= params
    assert "public id" in schema["info"]["description"]


def test_the_docs_render_the_schema_from_local_files(client, rounds):
    response = client.get("/api/docs/")
    html = response.content.decode()
    assert "/api/schema/" in html and "redoc.standalone.js" in html
    assert "cdn." not in html and 'src="https://' not in html
    assert "default-src 'self'" in response["Content-Security-Policy"]


def test_the_api_root_explains_itself(client, rounds):
    body = client.get("/api/v1/").json()
    assert "public id" in body["about"] and "olympic mean" in body["about"]
    assert body["docs"] == "http://testserver/api/docs/"
    assert body["endpoints"]["results"] == "http://testserver/api/v1/results/"


@pytest.mark.parametrize(
    "old, new",
    [
        ("/api/", "/api/v1/"),
        ("/api/results/?round=training-v5.1&page=2", "/api/v1/results/?round=training-v5.1&page=2"),
        ("/api/rounds/training-v0.5/", "/api/v1/rounds/training-v0.5/"),
        ("/api/prices/", "/api/v1/prices/"),
    ],
)
def test_the_paths_of_before_v1_redirect_to_v1(client, rounds, old, new):
    response = client.get(old)
    assert response.status_code == 301 and response["Location"] == new


def test_an_old_results_query_still_answers_through_the_redirect(client, v51):
    fill(v51, 2)
    body = client.get("/api/results/?benchmark=rgat", follow=True).json()
    assert body["count"] == 2


def test_an_old_item_path_by_primary_key_redirects_to_its_v1_id(client, v51):
    result = make.result(make.system(v51, "Acme", "a"), "rgat", 3, runs=5, public_id="5.1-0003")
    old = client.get(f"/api/results/{result.pk}/runs/")
    assert old.status_code == 301 and old["Location"] == "/api/v1/results/5.1-0003/runs/"
    assert client.get(f"/api/systems/{result.system.pk}/")["Location"] == (
        f"/api/v1/systems/{result.system.uid}/"
    )
    hidden = make.result(make.system(v51, "Hidden", "h", published=False), "rgat", 1)
    assert client.get(f"/api/results/{hidden.pk}/").status_code == 404


def test_a_list_as_csv_names_its_next_page(client, v51):
    fill(v51, 2)
    response = client.get("/api/v1/results/?format=csv&page_size=3&ordering=score")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 3 and rows[0]["score_minutes"] == "10.0" and rows[0]["public_id"] == ""
    assert "page=2" in response["Link"] and 'rel="next"' in response["Link"]
    empty = client.get("/api/v1/results/?format=csv&round=training-v0.5").content.decode()
    assert empty.startswith("public_id,uid,round,") and len(empty.splitlines()) == 1
    accepted = client.get("/api/v1/systems/", HTTP_ACCEPT="text/csv")
    assert accepted.content.decode().splitlines()[0].startswith("uid,round,submitter")


def test_published_lists_answer_304_until_the_next_publication(client, v51):
    fill(v51, 1)
    first = client.get("/api/v1/results/?round=training-v5.1")
    etag, modified = first["ETag"], first["Last-Modified"]
    assert first.status_code == 200 and etag and modified
    again = client.get("/api/v1/results/?round=training-v5.1", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b""
    since = client.get("/api/v1/results/?round=training-v5.1", HTTP_IF_MODIFIED_SINCE=modified)
    assert since.status_code == 304
    other_query = client.get("/api/v1/results/?round=training-v0.5", HTTP_IF_NONE_MATCH=etag)
    assert other_query.status_code == 200
    # A publication (here: a result published, then the round invalidated) changes the answer.
    make.result(make.system(v51, "Acme", "late"), "rgat", 3)
    assert client.get("/api/v1/results/?round=training-v5.1").json()["count"] == 2  # cached
    invalidate_round(v51.key)
    fresh = client.get("/api/v1/results/?round=training-v5.1", HTTP_IF_NONE_MATCH=etag)
    assert fresh.status_code == 200 and fresh.json()["count"] == 3 and fresh["ETag"] != etag


def test_a_cached_page_is_sent_gzipped_to_clients_that_take_it(client, v51):
    fill(v51, 1)
    plain = client.get("/api/v1/results/")
    packed = client.get("/api/v1/results/", HTTP_ACCEPT_ENCODING="gzip")
    assert packed["Content-Encoding"] == "gzip" and "Content-Encoding" not in plain
    assert "Accept-Encoding" in packed["Vary"]
    import gzip

    assert gzip.decompress(packed.content) == plain.content


def test_signed_in_users_get_fresh_answers(client, v51, cast):
    fill(v51, 1)
    client.force_login(cast["member_b"])
    assert client.get("/api/v1/results/").json()["count"] == 2
    make.result(make.system(v51, "Acme", "late"), "rgat", 3)
    response = client.get("/api/v1/results/")
    assert response.json()["count"] == 3 and "ETag" not in response


def test_anonymous_clients_are_throttled(client, v51, api_rates):
    api_rates["anon"] = "3/minute"
    from django.core.cache import cache

    cache.clear()
    codes = [client.get("/api/v1/rounds/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    # An answer served from the cache, or a 304, is counted and refused alike: else a client that asks
    # the same thing again and again was never limited.
    cache.clear()
    codes = [client.get("/api/v1/results/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    cache.clear()
    first = client.get("/api/v1/systems/")
    again = [
        client.get("/api/v1/systems/", HTTP_IF_NONE_MATCH=first["ETag"]).status_code
        for _ in range(3)
    ]
    assert (first.status_code, again) == (200, [304, 304, 429])


def test_the_api_lists_issue_a_fixed_number_of_queries_whatever_their_size(
    client, v51, django_assert_num_queries
):
    from django.core.cache import cache

    from leaderboard.cache import forget_round

    def queries(url, expected):
        cache.clear()
        forget_round(v51.key)  # the round is read at most once a second per process: read it now
        with django_assert_num_queries(expected):
            assert client.get(url).status_code == 200
        forget_round(v51.key)
        with django_assert_num_queries(1):  # warm: the rounds' tokens, then the cached page
            assert client.get(url).status_code == 200

    from leaderboard.models import CloudPrice

    for size in (2, 30):
        fill(v51, size, f"n{size}-")
        CloudPrice.objects.create(round=v51, submitter=f"n{size}", provider="P", instance="I")
        # the round, count, page, the page's findings (leaderboard.panels), the addresses it shares
        queries("/api/v1/results/?round=training-v5.1", 5)
        # the rounds, count, page, the addresses it shares
        queries("/api/v1/systems/", 4)
        queries("/api/v1/prices/", 3)
    with django_assert_num_queries(3):  # count, rounds, their benchmarks
        client.get("/api/v1/rounds/")
    result = make.result(make.system(v51, "Acme", "runs"), "rgat", 3, runs=5, public_id="5.1-1")
    cache.clear()
    # the rounds, the result, its runs, its findings, whether its address is shared
    with django_assert_num_queries(5):
        assert client.get(f"/api/v1/results/{result.public_id}/").status_code == 200


def test_an_unknown_api_path_answers_in_json(client, rounds):
    response = client.get("/api/v1/tokens/not.a.uid/?format=csv")
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}


def test_an_unknown_api_path_answers_json_to_a_post_with_a_cookie_too(rounds):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.cookies["csrftoken"] = "x" * 32
    response = client.delete("/api/v1/tokens/not.a.uid/")
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}


def test_a_round_says_its_phase_in_its_calendar(client, v51):
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    v51.deadline_at, v51.publish_at = now - timedelta(hours=1), now + timedelta(days=1)
    v51.save()
    body = client.get("/api/v1/rounds/training-v5.1/").json()
    assert body["phase"] == "review" and body["publish_at"]
    assert client.get("/api/v1/rounds/training-v0.5/").json()["phase"] == "history"


def test_a_cached_list_follows_the_publication_minute_without_an_invalidation(client, v51):
    from datetime import timedelta

    from django.utils import timezone

    from leaderboard.cache import forget_round
    from leaderboard.models import Round

    v51.publish_at = timezone.now() + timedelta(hours=1)
    v51.save()
    make.result(make.system(v51, "Acme", "alpha"), "rgat", 10)  # published early, under embargo
    url = "/api/v1/results/?round=training-v5.1"
    assert client.get(url).json()["count"] == 0
    # The minute passes; nothing replaced the round's token.
    Round.objects.filter(pk=v51.pk).update(publish_at=timezone.now() - timedelta(seconds=1))
    forget_round(v51.key)  # as a second's memo runs out
    assert client.get(url).json()["count"] == 1


def test_a_warm_list_of_one_round_needs_no_query(
    client, v51, django_assert_num_queries, monkeypatch
):
    from leaderboard import cache

    monkeypatch.setattr(cache, "ROUND_MEMO_SECONDS", 60)  # a slow machine must not cross the second
    fill(v51, 2)
    url = "/api/v1/results/?round=training-v5.1"
    assert client.get(url).status_code == 200
    with django_assert_num_queries(0):
        assert client.get(url).json()["count"] == 4


def test_a_member_sees_the_organisations_unpublished_results_and_no_one_else_does(
    client, v51, cast
):
    fill(v51, 1)
    draft = make.system(v51, "Acme", "draft", published=False)
    Submission = type(draft.submission)
    Submission.objects.filter(pk=draft.submission_id).update(organisation=cast["a"])
    hidden = make.result(draft, "rgat", 9, published=False)
    counts = {}
    for who in ("member_a", "member_b", None):
        client.logout()
        if who:
            client.force_login(cast[who])
        counts[who] = client.get("/api/v1/results/?round=training-v5.1").json()["count"]
        found = client.get(f"/api/v1/results/{hidden.uid}/").status_code
        systems = client.get("/api/v1/systems/").json()["count"]
        counts[who] = (counts[who], found, systems)
    assert counts == {"member_a": (3, 200, 2), "member_b": (2, 404, 1), None: (2, 404, 1)}


def test_the_api_cache_overrides_only_drf_s_documented_hooks():
    """leaderboard/api/apicache.py keeps to what DRF documents of a view ("Dispatch methods":
    initialize_request, initial, handle_exception, finalize_response; and the handlers), so a new DRF
    that keeps its documented behaviour keeps the cache's: no dispatch of its own, no throttles checked
    by hand, no attribute of DRF's request set."""
    from leaderboard.api.apicache import PublishedCache

    overridden = {name for name in vars(PublishedCache) if not name.startswith("_")}
    assert overridden <= {"initialize_request", "finalize_response", "list", "retrieve"}
    source = inspect.getsource(PublishedCache)
    assert "request._request" not in source and "check_throttles" not in source
