"""Webhooks through a real HTTP receiver on loopback: signed JSON (HMAC-SHA256), a receiver that answers
500 twice then 200 gets each event once, a delivery log of the answers, and only its own organisation's
events (the policy's). Tasks run in-process (eager: a retry runs at once, its wait skipped); the
real worker's retries are those of mail (test_delivery_worker.py), the same Celery options."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.exceptions import ValidationError

from notifications.emit import emit
from notifications.models import Webhook, WebhookDelivery
from notifications.tasks import deliver, post_webhook
from submissions.review import objections

from ..live_round import checked_submission, set_phase
from ..webhook_receiver import SECRET, Receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def live(rounds, cast, eager, settings):
    from portal.celery import app

    # A retry runs at once in-process (Celery's eager apply runs it when the failure is not raised).
    propagates, app.conf.task_eager_propagates = app.conf.task_eager_propagates, False
    settings.NOTIFY_MAIL_RETRY_S = 0
    settings.NOTIFY_WEBHOOKS_TO_INTERNAL = True  # the receiver is on 127.0.0.1
    round_ = set_phase(rounds["training-v5.1"], "review")
    acme = checked_submission(round_, cast["a"], "Acme")
    globex = checked_submission(round_, cast["b"], "Globex", "beta")
    yield acme, globex
    app.conf.task_eager_propagates = propagates


def test_a_receiver_that_fails_twice_gets_the_event_once_signed(
    live, cast, receiver, django_capture_on_commit_callbacks
):
    acme, _ = live
    hook = Webhook.objects.create(organisation=cast["a"], url=receiver.url, secret=SECRET)
    with django_capture_on_commit_callbacks(execute=True):
        emit("validation.finished", submission=acme.pk, validation=acme.validations.get().pk)
    assert receiver.answers == [500, 500, 200] and receiver.bad == 0
    [(kind, payload)] = receiver.events
    assert kind == "validation.finished" and payload["about"] == str(acme.uid)
    assert payload["url"].endswith(acme.get_absolute_url())
    log = hook.deliveries.get()
    assert (log.state, log.attempts, log.last_status, log.last_answer) == (
        "delivered",
        3,
        200,
        "ok",
    )
    # a redelivered task posts nothing again
    deliver(log.key)
    post_webhook(log.pk)
    assert len(receiver.events) == 1 and WebhookDelivery.objects.count() == 1


def test_a_webhook_hears_only_of_its_own_organisations_events(
    live, cast, receiver, django_capture_on_commit_callbacks
):
    acme, globex = live
    receiver.fail = 0
    Webhook.objects.create(organisation=cast["b"], url=receiver.url, secret=SECRET)
    with django_capture_on_commit_callbacks(execute=True):
        emit("validation.finished", submission=acme.pk, validation=acme.validations.get().pk)
    assert (
        receiver.events == []
    )  # Globex reviews Acme's submission in the site, but its CI hears nothing
    with django_capture_on_commit_callbacks(execute=True):
        objections.file_objection(
            cast["member_b"], acme, system_key="alpha", rule="5.1", comment="Seeds repeat."
        )
    assert [kind for kind, _ in receiver.events] == ["objection.filed"]  # a party to it


def test_an_organisations_admin_sets_a_webhook_and_reads_its_log_and_a_member_may_not(
    client, live, cast
):
    body = {"organisation": cast["a"].slug, "url": "https://93.184.215.14/hook", "secret": SECRET}
    client.force_login(cast["member_a"])
    refused = client.post("/api/v1/webhooks/", body, content_type="application/json")
    assert refused.status_code == 400 and "admins" in str(refused.json())
    client.force_login(cast["admin_a"])
    made = client.post("/api/v1/webhooks/", body, content_type="application/json")
    assert made.status_code == 201 and "secret" not in made.json()
    assert client.get(f"/api/v1/webhooks/{made.json()['id']}/deliveries/").json() == []
    client.force_login(cast["member_b"])
    assert client.get(f"/api/v1/webhooks/{made.json()['id']}/").status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",  # loopback
        "http://localhost/hook",
        "http://10.1.2.3/hook",  # private
        "http://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data/",  # link-local: a cloud's metadata service
        "http://[::1]/hook",
        "http://[fd00::1]/hook",
        "http://0.0.0.0/hook",
        "ftp://93.184.215.14/hook",
    ],
)
def test_a_webhook_to_an_internal_address_is_refused_when_saved(client, rounds, cast, url):
    client.force_login(cast["admin_a"])
    body = {"organisation": cast["a"].slug, "url": url, "secret": SECRET}
    refused = client.post("/api/v1/webhooks/", body, content_type="application/json")
    assert refused.status_code == 400, refused.json()
    assert "internal address" in str(refused.json()["url"]) or "http" in str(refused.json()["url"])
    assert not Webhook.objects.exists()
    with pytest.raises(ValidationError, match="url"):
        Webhook(organisation=cast["a"], url=url, secret=SECRET).full_clean()


def test_a_webhook_saved_before_is_refused_when_delivered_and_not_retried(
    live, cast, receiver, settings, django_capture_on_commit_callbacks
):
    acme, _ = live
    hook = Webhook.objects.create(organisation=cast["a"], url=receiver.url, secret=SECRET)
    settings.NOTIFY_WEBHOOKS_TO_INTERNAL = False  # as on a site: 127.0.0.1 is the site's own host
    with django_capture_on_commit_callbacks(execute=True):
        emit("validation.finished", submission=acme.pk, validation=acme.validations.get().pk)
    assert receiver.answers == []  # nothing reached it
    log = hook.deliveries.get()
    assert (log.state, log.attempts, log.last_status) == ("failed", 1, None)
    assert log.last_answer.startswith("refused: 127.0.0.1 resolves to 127.0.0.1, an internal")


def test_a_redirect_is_not_followed_to_an_internal_address(
    live, cast, receiver, django_capture_on_commit_callbacks
):
    acme, _ = live
    receiver.fail = 0
    redirect = Redirector(receiver.url)
    try:
        hook = Webhook.objects.create(organisation=cast["a"], url=redirect.url, secret=SECRET)
        with django_capture_on_commit_callbacks(execute=True):
            emit("validation.finished", submission=acme.pk, validation=acme.validations.get().pk)
    finally:
        redirect.shutdown()
        redirect.server_close()
    assert receiver.answers == []
    log = hook.deliveries.get()
    assert log.last_status == 302 and log.state == "failed"


class Redirector(ThreadingHTTPServer):
    """Answers every POST with 302 to `target` (urllib followed it, as a GET)."""

    def __init__(self, target):
        super().__init__(("127.0.0.1", 0), _Redirect)
        self.target = target
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/hook"


class _Redirect(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(302)
        self.send_header("Location", self.server.target)
        self.end_headers()
