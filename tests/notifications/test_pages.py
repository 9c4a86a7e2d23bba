"""The notifications in the site (list, unread count in the header, marking read), the preferences page
and API, and the signed one-click unsubscribe link of a mail, through HTTP."""

import re

import pytest
from django.core import mail

from notifications.channels.mail import message
from notifications.models import Notification, Preference

pytestmark = pytest.mark.django_db


def notify(user, title="Valid: acme.tgz", kind="validation.finished", n=0):
    return Notification.objects.create(
        key=f"{kind}:test={n}", kind=kind, recipient=user, title=title, text="Checked.", url="/"
    )


def test_the_header_counts_unread_notifications_and_the_list_shows_them(client, cast):
    for n in range(3):
        notify(cast["member_a"], f"Valid: bundle-{n}.tgz", n=n)
    notify(cast["member_b"], "Valid: theirs.tgz", n=9)
    client.force_login(cast["member_a"])
    page = client.get("/notifications/").content.decode()
    assert re.search(r'id="notifications-link">Notifications <span class="count">3<', page)
    assert "bundle-2.tgz" in page and "theirs.tgz" not in page
    client.post(
        "/notifications/read/", {"id": Notification.objects.filter(title__contains="-0").get().pk}
    )
    assert '<span class="count">2<' in client.get("/notifications/").content.decode()
    client.post("/notifications/read/")
    assert 'class="count"' not in client.get("/notifications/").content.decode()


def test_no_one_marks_another_users_notification_read(client, cast):
    theirs = notify(cast["member_b"])
    client.force_login(cast["member_a"])
    client.post("/notifications/read/", {"id": theirs.pk})
    theirs.refresh_from_db()
    assert theirs.read_at is None


def test_the_list_asks_a_visitor_to_log_in(client):
    answer = client.get("/notifications/")
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]


def test_the_preferences_page_keeps_a_choice_per_event(client, cast):
    client.force_login(cast["member_a"])
    page = client.get("/notifications/preferences/").content.decode()
    assert 'name="validation.finished" value="both"' in page
    client.post(
        "/notifications/preferences/", {"validation.finished": "site", "objection.filed": "x"}
    )
    assert (
        Preference.objects.get(user=cast["member_a"], kind="validation.finished").channel == "site"
    )
    assert not Preference.objects.filter(kind="objection.filed").exists()  # not a channel: ignored


def test_the_api_lists_and_sets_preferences_and_lists_and_marks_notifications(client, cast):
    notify(cast["member_a"])
    client.force_login(cast["member_a"])
    rows = client.get("/api/v1/notification-preferences/").json()
    assert {"kind": "deadline.1h", "label": "1 hour to a deadline", "channel": "both"} in rows
    answer = client.put(
        "/api/v1/notification-preferences/deadline.1h/",
        {"channel": "email"},
        content_type="application/json",
    )
    assert answer.status_code == 200 and answer.json()["channel"] == "email"
    bad = client.put(
        "/api/v1/notification-preferences/deadline.1h/",
        {"channel": "pigeon"},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "channel" in bad.json()
    assert (
        client.put(
            "/api/v1/notification-preferences/no.such/",
            {"channel": "email"},
            content_type="application/json",
        ).status_code
        == 404
    )
    listed = client.get("/api/v1/notifications/").json()
    assert listed["count"] == 1 and listed["results"][0]["read_at"] is None
    assert client.post(
        "/api/v1/notifications/read/", {}, content_type="application/json"
    ).json() == {"marked": 1}


def test_a_mail_has_text_html_and_a_one_click_unsubscribe_that_works_without_a_session(
    client, cast
):
    n = notify(cast["member_a"])
    message(n, "member_a@example.org").send()
    sent = mail.outbox[0]
    header = sent.extra_headers["List-Unsubscribe"]
    assert sent.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    link = re.fullmatch(r"<http://[^/]+(/notifications/unsubscribe/[^>]+/)>", header)[1]
    assert link in sent.body and link in sent.alternatives[0][0]
    assert "Valid: acme.tgz" in sent.subject
    page = client.get(link)  # a mail program's preview only shows the question
    assert page.status_code == 200 and not Preference.objects.exists()
    assert (
        client.post(link).status_code == 200
    )  # the one click (RFC 8058): no session, no CSRF token
    assert (
        Preference.objects.get(user=cast["member_a"], kind="validation.finished").channel == "site"
    )


def test_a_forged_or_cut_unsubscribe_link_changes_nothing(client, cast):
    n = notify(cast["member_a"])
    message(n, "member_a@example.org").send()
    link = re.search(
        r"(/notifications/unsubscribe/[^>]+/)>", mail.outbox[0].extra_headers["List-Unsubscribe"]
    )[1]
    forged = link[:-3] + ("A" if link[-3] != "A" else "B") + link[-2:]
    assert client.post(forged).status_code == 400
    assert not Preference.objects.exists()
