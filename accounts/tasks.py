"""Accounts' Celery task: the password reset mail, sent by a worker rather than while the form answers."""

from celery import shared_task
from django.contrib.auth.forms import PasswordResetForm

from portal.celery import RETRY


@shared_task(name="accounts.send_password_reset", ignore_result=True, **RETRY)
def send_password_reset(email: str, domain: str, use_https: bool) -> None:
    """Mail a link to set a new password to every active user of `email` (none when no account has it),
    as Django's password reset form does, with links to `domain`."""
    form = PasswordResetForm({"email": email})
    if form.is_valid():
        form.save(domain_override=domain, use_https=use_https)
