"""API tokens: made by their user, shown once, stored as a hash, accepted as `Authorization: Token <key>`
until revoked."""

import hashlib
import re

import pytest

from accounts.models import ApiToken
from accounts.tokens import issue, revoke
from audit.models import AuditEvent

pytestmark = pytest.mark.django_db

TOKENS = "/api/v1/tokens/"


def auth(key):
    return {"HTTP_AUTHORIZATION": f"Token {key}"}


def test_only_the_keys_hash_is_stored(cast):
    token, key = issue(cast["member_a"], "CI")
    stored = ApiToken.objects.get(pk=token.pk)
    assert stored.key_sha256 == hashlib.sha256(key.encode()).hexdigest()
    assert key not in str(ApiToken.objects.filter(pk=token.pk).values().get())
    assert stored.prefix == key[:8]


def test_a_token_authenticates_its_user_until_revoked(client, cast):
    token, key = issue(cast["member_a"], "CI")
    response = client.get(TOKENS, **auth(key))
    assert response.status_code == 200
    assert [t["name"] for t in response.json()] == ["CI"]
    token.refresh_from_db()
    assert token.last_used_at is not None
    revoke(token, cast["member_a"])
    assert client.get(TOKENS, **auth(key)).status_code == 401


def test_a_wrong_or_malformed_token_is_refused(client, cast):
    issue(cast["member_a"], "CI")
    assert client.get(TOKENS, **auth("not-a-key")).status_code == 401
    assert client.get(TOKENS, HTTP_AUTHORIZATION="Token a b").status_code == 401
    assert client.get(TOKENS).status_code in (401, 403)


def test_a_token_of_an_inactive_user_is_refused(client, cast):
    _, key = issue(cast["member_a"], "CI")
    cast["member_a"].is_active = False
    cast["member_a"].save()
    assert client.get(TOKENS, **auth(key)).status_code == 401


def test_tokens_are_made_and_revoked_through_the_api_and_audited(client, cast):
    _, key = issue(cast["member_b"], "laptop")
    made = client.post(TOKENS, {"name": "CI"}, **auth(key))
    assert made.status_code == 201
    new_key = made.json()["key"]
    uid = made.json()["uid"]
    listed = client.get(TOKENS, **auth(new_key)).json()
    assert {t["name"] for t in listed} == {"laptop", "CI"} and all(t["key"] is None for t in listed)
    assert client.delete(f"{TOKENS}{uid}/", **auth(key)).status_code == 204
    assert client.get(TOKENS, **auth(new_key)).status_code == 401
    assert list(
        AuditEvent.objects.filter(actor=cast["member_b"])
        .order_by("at")
        .values_list("action", flat=True)
    ) == ["token.created", "token.created", "token.revoked"]


def test_nobody_sees_or_revokes_anothers_token(client, cast):
    theirs, _ = issue(cast["member_a"], "CI")
    _, key = issue(cast["member_b"], "CI")
    assert client.get(f"{TOKENS}{theirs.uid}/", **auth(key)).status_code == 404
    assert client.delete(f"{TOKENS}{theirs.uid}/", **auth(key)).status_code == 404
    theirs.refresh_from_db()
    assert not theirs.revoked


def test_a_user_makes_lists_and_revokes_tokens_in_the_site(client, cast):
    client.force_login(cast["member_a"])
    made = client.post("/accounts/tokens/", {"name": "CI"})
    assert made.status_code == 201
    key = made.context["key"]
    assert key in made.content.decode() and len(key) >= 40
    listed = client.get("/accounts/tokens/").content.decode()
    assert "CI" in listed and key not in listed and key[:8] in listed
    token = ApiToken.objects.get(user=cast["member_a"])
    assert client.get(TOKENS, **auth(key)).status_code == 200
    client.force_login(cast["member_b"])  # another's token: as if there were none
    assert client.post(f"/accounts/tokens/{token.uid}/revoke/").status_code == 404
    client.force_login(cast["member_a"])
    client.post(f"/accounts/tokens/{token.uid}/revoke/")
    assert client.get(TOKENS, **auth(key)).status_code == 401
    assert AuditEvent.objects.filter(action="token.revoked", actor=cast["member_a"]).count() == 1


def test_the_tokens_page_is_titled_and_lists_the_organisations_once(client, cast):
    """The list of a member's organisations sat in the page's <title> block as well as its body: the
    browser's tab read "API tokens <h2>Your organisations</h2><ul>..." before the site's name."""
    client.force_login(cast["member_a"])
    page = client.get("/accounts/tokens/").content.decode()
    assert re.search(r"<title>(.*?)</title>", page, re.S)[1] == "API tokens · Results portal"
    assert page.count("Your organisations") == 1 and page.count(">Acme</a>") == 1
