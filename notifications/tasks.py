"""The tasks that tell people (queue "celery"), and the clock's (queue "clock"): deadlines, phases and
the sweep of what a broker or mail server outage left behind.

deliver(key): the event's recipients get one Notification each (unique per key and recipient: a retried
or redelivered task creates none twice), then one send_mail task per mail. send_mail locks every mail
still pending for its row's recipient and marks them sent in the same transaction as it mails them, so two
copies of the task mail once; a mail server that does not answer is retried with backoff, and the sweep
queues it again later, so it is delayed, never lost. Nothing here runs in a request or fails the write it
tells of.

Each recipient is told in their language (preferences.languages): the event's tell runs once per language
among its recipients, under translation.override, and each mail is rendered in its recipient's language.
A webhook's payload is in settings.LANGUAGE_CODE, for the machines that read it.

The deadline rush is batched per recipient: a recipient mailed less than NOTIFY_DIGEST_WINDOW_S ago gets
nothing more until that window ends, and then what piled up as one digest (mail.digest); so do mails held
up by a mail server that was down, whose first retry after it returns sends them all.
"""

import logging
import smtplib
from datetime import timedelta

from celery import shared_task
from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Max, Min, Q
from django.utils import timezone, translation

from leaderboard.access import policy
from leaderboard.models import Round
from leaderboard.statuses import SubmissionStatus
from portal.celery import RETRY

from .channels import mail, webhooks
from .events import EVENTS, key_of
from .models import Channel, Notification, Outbox, Webhook, WebhookDelivery
from .preferences import MAIL, SITE, channels, languages

log = logging.getLogger(__name__)

# A mail that failed is tried again after NOTIFY_MAIL_RETRY_S (30 s), then twice as long each time.
MAIL_RETRIES = 12
OUTBOX_LATE = timedelta(minutes=1)  # an event not delivered by then is queued again by the sweep
# A mail still pending after MAIL_LATE is queued again every minute, one task a recipient: once the mail
# server is back, what an outage held up goes within about a minute, not at its next backoff (up to an
# hour). A webhook's delivery, one task each, after HOOK_LATE.
MAIL_LATE = timedelta(minutes=2)
HOOK_LATE = timedelta(minutes=15)


def record(kind: str, ids: dict) -> str:
    """The event in the Outbox (in the caller's transaction); its key."""
    if kind not in EVENTS:
        raise ValueError(f"unknown event {kind!r}: add it to notifications/events.py")
    key = key_of(kind, ids)
    Outbox.objects.bulk_create([Outbox(key=key, kind=kind, ids=ids)], ignore_conflicts=True)
    return key


def queue(key: str) -> None:
    try:
        deliver.delay(key)
    except Exception:  # the broker is down: the sweep queues it when it is back
        log.warning("notification %s not queued (the broker did not answer); the sweep will", key)


def recipients(told) -> list:
    """The users the event's audience names whom the policy lets hear of it."""
    users = (
        get_user_model()
        .objects.filter(told.audience, is_active=True)
        .exclude(pk=told.not_to)
        .distinct()
    )
    return [
        u
        for u in users
        if policy.may_hear(policy.viewer(u), submission=told.submission, objection=told.objection)
    ]


@shared_task(name="notifications.deliver", **RETRY)
def deliver(key: str) -> int:
    """Tell the event's recipients; returns how many it told (0 when it was done already)."""
    with transaction.atomic():
        box = Outbox.objects.select_for_update(skip_locked=True).filter(key=key).first()
        if box is None or box.delivered_at is not None:
            return 0
        Outbox.objects.filter(pk=box.pk).update(attempts=F("attempts") + 1)
        with translation.override(settings.LANGUAGE_CODE):
            told = EVENTS[box.kind].tell(box.ids)
        if told is not None and told.not_before and told.not_before > timezone.now():
            return 0  # under embargo: the clock's sweep queues it again until its minute has come
        users = recipients(told) if told is not None else []
        chosen = channels([u.pk for u in users], box.kind)
        spoken = languages([u.pk for u in users])
        said = {settings.LANGUAGE_CODE: told}
        for language in set(spoken.values()) - set(said):
            with translation.override(language):
                said[language] = EVENTS[box.kind].tell(box.ids)
        rows = [
            Notification(
                key=key,
                kind=box.kind,
                recipient=u,
                title=said[spoken[u.pk]].title[:300],
                text=said[spoken[u.pk]].text,
                url=told.url,
                in_site=chosen[u.pk] in SITE,
                mail=Notification.Mail.PENDING
                if chosen[u.pk] in MAIL and u.email
                else Notification.Mail.NONE,
            )
            for u in users
            if chosen[u.pk] != Channel.NONE
        ]
        Notification.objects.bulk_create(rows, ignore_conflicts=True)
        _hooks(box, told)
        Outbox.objects.filter(pk=box.pk).update(delivered_at=timezone.now())
        pending = list(
            Notification.objects.filter(key=key, mail=Notification.Mail.PENDING).values_list(
                "pk", flat=True
            )
        )
        transaction.on_commit(lambda: [send_mail.delay(pk) for pk in pending])
    return len(rows)


def _hooks(box: Outbox, told) -> None:
    """A delivery per active webhook of the organisations the policy lets hear of the event, each
    posted once this commits."""
    if told is None:
        return
    allowed = [
        org
        for org in dict.fromkeys(told.parties)
        if org
        and policy.organisation_may_hear(org, submission=told.submission, objection=told.objection)
    ]
    payload = {
        "event": box.kind,
        "key": box.key,
        "about": told.about,
        "title": told.title,
        "text": told.text,
        "url": mail.absolute(told.url) if told.url else "",
        "at": box.created_at.isoformat(),
    }
    hooks = Webhook.objects.filter(organisation_id__in=allowed, active=True)
    WebhookDelivery.objects.bulk_create(
        [WebhookDelivery(webhook=h, key=box.key, kind=box.kind, payload=payload) for h in hooks],
        ignore_conflicts=True,
    )
    pending = list(
        WebhookDelivery.objects.filter(
            key=box.key, state=WebhookDelivery.State.PENDING
        ).values_list("pk", flat=True)
    )
    transaction.on_commit(lambda: [post_webhook.delay(pk) for pk in pending])


def _post(pk: int) -> bool | None:
    """Post the delivery if it is still pending and no other task holds it: True when the receiver took
    it, False when it did not (the answer is logged on the row), None when there was nothing to do or the
    URL is refused (webhooks.address: the delivery fails at once, the reason logged)."""
    with transaction.atomic():
        d = (
            WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("webhook")
            .filter(pk=pk, state=WebhookDelivery.State.PENDING)
            .first()
        )
        if d is None:
            return None
        try:
            status, answer = webhooks.post(
                d.webhook.url, d.webhook.secret, d.kind, f"{d.key}@{d.webhook_id}", d.payload
            )
        except webhooks.Refused as refused:  # an internal address: given up at once, and why
            WebhookDelivery.objects.filter(pk=pk).update(
                attempts=F("attempts") + 1,
                last_status=None,
                last_answer=f"refused: {refused}"[:500],
                state=WebhookDelivery.State.FAILED,
            )
            return None
        ok = 200 <= status < 300
        WebhookDelivery.objects.filter(pk=pk).update(
            attempts=F("attempts") + 1,
            last_status=status or None,
            last_answer=answer,
            state=WebhookDelivery.State.DELIVERED if ok else WebhookDelivery.State.PENDING,
            delivered_at=timezone.now() if ok else None,
        )
    return ok


class WebhookRefused(Exception):
    pass


@shared_task(name="notifications.post_webhook", bind=True, acks_late=True, max_retries=MAIL_RETRIES)
def post_webhook(self, pk: int) -> bool | None:
    """POST one delivery; a receiver that fails is tried again with backoff, then the delivery is given
    up (state failed, its last answer kept)."""
    ok = _post(pk)
    if ok is False:
        if self.request.retries >= self.max_retries:
            WebhookDelivery.objects.filter(pk=pk).update(state=WebhookDelivery.State.FAILED)
            return False
        wait = min(settings.NOTIFY_MAIL_RETRY_S * 2**self.request.retries, 3600)
        raise self.retry(exc=WebhookRefused(pk), countdown=wait)
    return ok


def _send(pk: int, window_ended: bool = False) -> int:
    """Mail the notification, with every other mail pending for its recipient as one digest; how many
    notifications it mailed (0: done already, or put off to the end of the recipient's window)."""
    now = timezone.now()
    with transaction.atomic():
        recipient = (
            Notification.objects.filter(pk=pk, mail=Notification.Mail.PENDING)
            .values_list("recipient_id", flat=True)
            .first()
        )
        if recipient is None:
            return 0
        # Every pending mail of the recipient, locked in one order: a second task of the same recipient
        # waits for this one, then finds its own row mailed (never a part mailed by each, or twice).
        batched = settings.NOTIFY_DIGEST_WINDOW_S > 0  # 0: a mail per notification, never a digest
        pending = list(
            Notification.objects.select_for_update(of=("self",))
            .select_related("recipient")
            .filter(recipient_id=recipient, mail=Notification.Mail.PENDING)
            .filter(Q() if batched else Q(pk=pk))
            .order_by("pk")
        )
        if pk not in {n.pk for n in pending}:
            return 0
        window = timedelta(seconds=settings.NOTIFY_DIGEST_WINDOW_S)
        last = Notification.objects.filter(recipient_id=recipient).aggregate(Max("mailed_at"))
        last = last["mailed_at__max"]
        if not window_ended and last is not None and now - last < window:
            # Mailed a moment ago (the deadline rush): what comes until the window ends goes as one.
            wait = (last + window - now).total_seconds()
            transaction.on_commit(
                lambda: send_mail.apply_async((pk,), {"window_ended": True}, countdown=wait)
            )
            return 0
        address = pending[0].recipient.email
        with translation.override(languages([recipient])[recipient]):
            sent = (
                mail.message(pending[0], address)
                if len(pending) == 1
                else mail.digest(pending, address)
            )
        try:
            sent.send()
        except (smtplib.SMTPException, OSError) as exc:
            failed = exc
        else:
            failed = None
            Notification.objects.filter(pk__in=[n.pk for n in pending]).update(
                mail=Notification.Mail.SENT, mailed_at=now, mail_error=""
            )
    if failed is not None:  # the rows say why, for the admin, after the transaction let them go
        Notification.objects.filter(pk__in=[n.pk for n in pending]).update(
            mail_attempts=F("mail_attempts") + 1, mail_error=str(failed)[:500]
        )
        raise failed
    return len(pending)


@shared_task(name="notifications.send_mail", bind=True, acks_late=True, max_retries=MAIL_RETRIES)
def send_mail(self, pk: int, window_ended: bool = False) -> int:
    """Mail a notification (and its recipient's others pending, as one digest); a mail server that
    fails is tried again with backoff."""
    try:
        return _send(pk, window_ended)
    except (smtplib.SMTPException, OSError) as exc:
        log.warning("mail of notification %s failed (%s); retrying", pk, exc)
        wait = min(settings.NOTIFY_MAIL_RETRY_S * 2**self.request.retries, 3600)
        raise self.retry(exc=exc, countdown=wait) from exc


def _due(now):
    """(kind, ids) of the clock's events now: deadlines within 24 h and 1 h for each organisation of the
    round with no valid submission yet, and review phases that began within the last hour."""
    Submission = apps.get_model("submissions", "Submission")
    soon = Round.objects.filter(deadline_at__gt=now, deadline_at__lte=now + timedelta(hours=24))
    for round_ in soon:
        hours = "1h" if round_.deadline_at - now <= timedelta(hours=1) else "24h"
        theirs = Submission.objects.filter(round=round_, organisation__isnull=False)
        done = theirs.filter(
            status__in=(SubmissionStatus.VALID, SubmissionStatus.PUBLISHED)
        ).values("organisation_id")
        for org in (
            theirs.exclude(organisation_id__in=done)
            .values_list("organisation_id", flat=True)
            .distinct()
        ):
            yield f"deadline.{hours}", {"round": round_.pk, "organisation": org}
    lately = Q(review_ends_at__gt=now - timedelta(hours=1), review_ends_at__lte=now)
    for round_ in Round.objects.filter(
        Q(deadline_at__gt=now - timedelta(hours=2), deadline_at__lte=now) | lately
    ):
        closes = round_.calendar.closes_at
        if closes and now - timedelta(hours=1) < closes <= now:
            yield "round.review_opens", {"round": round_.pk}
        if round_.review_ends_at and now - timedelta(hours=1) < round_.review_ends_at <= now:
            yield "round.review_closes", {"round": round_.pk}


@shared_task(name="notifications.clock", **RETRY)
def clock() -> int:
    """Every minute (beat): the clock's events, then what is late (the broker or the mail server was
    down) queued again. Returns how many events it recorded or queued."""
    now = timezone.now()
    keys = []
    due = {key_of(kind, ids): (kind, ids) for kind, ids in _due(now)}
    known = set(Outbox.objects.filter(key__in=due).values_list("key", flat=True))
    with transaction.atomic():
        for key, (kind, ids) in due.items():
            if key not in known:
                keys.append(record(kind, ids))
    late = Outbox.objects.filter(delivered_at__isnull=True, created_at__lte=now - OUTBOX_LATE)
    keys += late.values_list("key", flat=True)
    for key in dict.fromkeys(keys):
        queue(key)
    late_mails = Notification.objects.filter(
        mail=Notification.Mail.PENDING, created_at__lte=now - MAIL_LATE
    )
    if settings.NOTIFY_DIGEST_WINDOW_S > 0:  # one task mails all that is pending for its recipient
        late_mails = late_mails.values("recipient_id").annotate(first=Min("pk"))
        mails = [row["first"] for row in late_mails]
    else:
        mails = late_mails.values_list("pk", flat=True)
    for pk in mails:
        send_mail.delay(pk)
    hooks = WebhookDelivery.objects.filter(
        state=WebhookDelivery.State.PENDING, created_at__lte=now - HOOK_LATE
    ).values_list("pk", flat=True)
    for pk in hooks:
        post_webhook.delay(pk)
    return len(keys)
