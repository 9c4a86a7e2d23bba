"""Each recipient is told in their language (notifications.Language): the titles and texts stored on their
notifications, the mails (one and digests) through a real SMTP server on loopback (tests/smtp.py), the
in-site list; chosen on the preferences page, through the API, or kept from their choice on the site."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from notifications.emit import emit
from notifications.models import Language, Notification
from notifications.tasks import clock, send_mail
from submissions.review import objections

from ..live_round import checked_submission, set_phase
from ..smtp import SMTPServer

pytestmark = pytest.mark.django_db

LANGUAGE_API = "/api/v1/notification-preferences/language/"


@pytest.fixture
def acme(rounds, cast, eager):
    round_ = set_phase(rounds["training-v5.1"], "review")
    submission = checked_submission(round_, cast["a"], "Acme")
    submission.uploaded_by = cast["member_a"]
    submission.save()
    return submission


@pytest.fixture
def smtp(settings):
    server = SMTPServer()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
    yield server
    server.stop()


def mails(smtp) -> dict:
    return {m["To"].split("@")[0]: m for m in smtp.parsed()}


def body(message) -> str:
    return message.get_body(("plain",)).get_content()


def test_the_same_verdict_is_mailed_and_listed_in_each_recipients_language(
    client, cast, acme, smtp, django_capture_on_commit_callbacks
):
    client.force_login(cast["member_a"])
    client.post(reverse("notifications:preferences"), {"language": "zh-hans"})
    assert Language.objects.get(user=cast["member_a"]).language == "zh-hans"
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            emit("validation.finished", submission=acme.pk, validation=acme.validations.get().pk)
    sent = mails(smtp)
    assert sorted(sent) == ["admin_a", "member_a"]
    name, round_ = acme.original_name, acme.round.name
    chinese, english = sent["member_a"], sent["admin_a"]
    assert chinese["Subject"].strip() == f"[结果门户] 有效：{name}（{round_}）"
    assert f"门户已检查 {name}：结果有效" in body(chinese)
    assert "不再接收此类邮件：" in body(chinese) and "Valid" not in body(chinese)
    assert english["Subject"].strip() == f"[Results portal] Valid: {name} for {round_}"
    assert f"The portal checked {name}: it is valid" in body(english)
    assert "No more mails of this kind:" in body(english) and "有效" not in body(english)

    listed = client.get(reverse("notifications:list")).content.decode()
    assert f"有效：{name}（{round_}）" in listed and "Valid: " not in listed
    client.force_login(cast["admin_a"])
    listed = client.get(reverse("notifications:list")).content.decode()
    assert f"Valid: {name} for {round_}" in listed and "有效：" not in listed


def test_a_digest_is_in_its_recipients_language(cast, smtp):
    Language.objects.create(user=cast["member_a"], language="zh-hans")
    pending = [
        Notification.objects.create(
            key=f"deadline.24h:round={i}",
            kind="deadline.24h",
            recipient=cast["member_a"],
            title=f"标题 {i}",
            text="正文",
            mail=Notification.Mail.PENDING,
        )
        for i in range(3)
    ]
    assert send_mail(pending[0].pk) == 3
    (digest,) = smtp.parsed()
    assert digest["Subject"].strip() == "[结果门户] 标题 0，以及另外 2 条"
    assert "不再接收这些类型的邮件：" in body(digest) and "No more mails" not in body(digest)
    assert "标题 2" in body(digest)


def test_the_api_reads_and_sets_the_language(client, cast):
    client.force_login(cast["member_a"])
    assert client.get(LANGUAGE_API).json() == {"language": "en-gb"}
    chosen = client.put(LANGUAGE_API, {"language": "zh-hans"}, content_type="application/json")
    assert chosen.json() == {"language": "zh-hans"}
    assert Language.objects.get(user=cast["member_a"]).language == "zh-hans"
    refused = client.put(LANGUAGE_API, {"language": "fr"}, content_type="application/json")
    assert refused.status_code == 400 and "language" in refused.json()
    assert client.get(LANGUAGE_API).json() == {"language": "zh-hans"}


def test_the_language_chosen_on_the_site_is_kept_for_notifications(client, cast):
    user = cast["member_a"]
    client.force_login(user)
    client.get("/")
    assert not Language.objects.filter(user=user).exists()  # no choice: English, nothing written
    client.get("/?lang=zh-hans")  # the switcher: the cookie is set too
    assert Language.objects.get(user=user).language == "zh-hans"
    client.get("/?lang=en")
    assert Language.objects.get(user=user).language == "en-gb"

    # A choice made on the preferences page stands against a cookie of before it.
    other = cast["member_b"]
    Language.objects.create(user=other, language="en-gb")
    client.force_login(other)
    client.cookies["lang"] = "zh-hans"
    client.get("/")
    assert Language.objects.get(user=other).language == "en-gb"
    # A user who never chose gets the cookie's, once.
    third = cast["admin_a"]
    client.force_login(third)
    client.get("/")
    assert Language.objects.get(user=third).language == "zh-hans"


def test_an_objections_thread_and_a_deadline_are_told_in_chinese_names_as_published(
    cast, acme, rounds, django_capture_on_commit_callbacks
):
    for who in ("reviewer", "admin_a", "member_b"):
        Language.objects.create(user=cast[who], language="zh-hans")
    acme.round.reviewers.add(cast["reviewer"])
    globex = checked_submission(acme.round, cast["b"], "Globex", "beta")
    with django_capture_on_commit_callbacks(execute=True):
        objection = objections.file_objection(
            cast["member_b"], acme, system_key="alpha", rule="5.1", comment="Seeds repeat."
        )
    with django_capture_on_commit_callbacks(execute=True):
        objections.reply(cast["admin_a"], objection, "They do not.")
    with django_capture_on_commit_callbacks(execute=True):
        objections.decide(cast["reviewer"], objection, "accepted", "Seeds differ.")

    def said(kind, who):
        n = Notification.objects.get(kind=kind, recipient=cast[who])
        return n.title, n.text

    org_b = str(objection.from_organisation)
    assert said("objection.filed", "admin_a") == (
        f"{org_b} 对 alpha 提出异议",
        f"{org_b} 对 Training v5.1 中的 alpha 提出异议：5.1。\n\nSeeds repeat.",
    )
    title, text = said("objection.replied", "member_b")
    assert title == "对 alpha 的异议有新答复" and text.endswith("：\n\nThey do not.")
    title, text = said("objection.decided", "member_b")
    assert title.startswith("已裁定：") and "评审人已对" in text and "Seeds differ." in text
    assert "objection" not in title + text.replace("Seeds differ.", "")

    globex.status = "invalid"
    globex.save()
    acme.round.deadline_at = timezone.now() + timedelta(minutes=30)
    acme.round.save()
    with django_capture_on_commit_callbacks(execute=True):
        clock()
    title, text = said("deadline.1h", "member_b")
    assert title == "距 Training v5.1 截止还有 1 小时，尚无有效提交"
    assert text == "Training v5.1 的上传将在约 1 小时后截止，而贵机构尚无有效提交。"


def test_the_notification_apis_refusals_are_in_the_clients_language(client, rounds, cast):
    client.force_login(cast["admin_a"])
    chinese = {"HTTP_ACCEPT_LANGUAGE": "zh-hans", "content_type": "application/json"}
    body = {"organisation": cast["a"].slug, "url": "http://127.0.0.1/hook", "secret": "s" * 20}
    refused = client.post("/api/v1/webhooks/", body, **chinese)
    assert refused.status_code == 400
    assert "127.0.0.1 解析为 127.0.0.1，这是内部地址" in refused.json()["url"][0]
    refused = client.post("/api/v1/notifications/read/", {"ids": "all"}, **chinese)
    assert refused.json() == {"ids": "通知编号的列表。"}
    missing = client.put("/api/v1/notification-preferences/nope/", {"channel": "site"}, **chinese)
    assert missing.status_code == 404 and "没有事件 'nope'" in missing.json()["detail"]
