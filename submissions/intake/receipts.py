"""A receipt for each accepted upload: a page, and an email to the uploader, saying what the portal holds.

Submission id, bundle name, size, sha256, when it was received, and where to follow its checking. The
email goes through Django's email API (EMAIL_URL; printed on the console by default); a mail server that
fails does not fail the upload: the page is the receipt of record.
"""

import logging

from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import gettext

from audit.log import record

log = logging.getLogger(__name__)


def receipt_url(submission) -> str:
    return reverse("submissions:receipt", args=[submission.uid])


def context(submission, request) -> dict:
    return {
        "submission": submission,
        "status_url": request.build_absolute_uri(submission.get_absolute_url()),
        "receipt_url": request.build_absolute_uri(receipt_url(submission)),
    }


def send(submission, request) -> bool:
    """Mail the receipt to the uploader, if they have an address; True when it went."""
    user = submission.uploaded_by
    if user is None or not user.email:
        return False
    text = render_to_string("submissions/receipt.txt", context(submission, request))
    try:
        send_mail(
            gettext("Received: %(bundle)s (%(round)s)")
            % {"bundle": submission.original_name, "round": submission.round.name},
            text,
            None,  # DEFAULT_FROM_EMAIL
            [user.email],
        )
    except Exception:  # the upload is taken whatever the mail server says
        log.exception("the receipt of submission %s could not be mailed", submission.uid)
        return False
    return True


def accepted(submission, request) -> None:
    """A new submission from an upload (page or API): in the audit log now, its receipt mailed once committed."""
    record(
        "submission.uploaded",
        actor=request.user,
        obj=submission,
        round=submission.round,
        bundle=submission.original_name,
        size=submission.size,
        sha256=submission.sha256,
    )
    transaction.on_commit(lambda: send(submission, request))
