import logging

from django import forms
from django.contrib.auth.forms import PasswordResetForm
from django.db import transaction
from django.utils.translation import gettext_lazy as _
from kombu.exceptions import OperationalError

from .models import Membership
from .tasks import send_password_reset

log = logging.getLogger(__name__)


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text=_("What the token is for, e.g. 'CI of the training repository'.")
    )


class MemberForm(forms.Form):
    """An invitation: the user named accepts it (accounts/members.py). Whether that user exists is not
    said, so that the form tells an organisation admin no usernames."""

    username = forms.CharField(max_length=150, help_text=_("The user's name on this portal."))
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)

    def clean_username(self):
        return self.cleaned_data["username"].strip()


class QueuedPasswordResetForm(PasswordResetForm):
    """Django's password reset form, whose mail a worker sends (accounts/tasks.py). Sent while the form
    answered, it made the answer for a registered address about ten times slower than for any other
    (issue 34), which told anyone which addresses have accounts; now both answers queue the same task
    and look nothing up. While the broker does not answer, the mail is sent at once, as before."""

    def save(self, domain_override=None, use_https=False, request=None, **kwargs):
        email = self.cleaned_data["email"]
        domain = domain_override or request.get_host()

        def queue():
            try:
                send_password_reset.delay(email, domain, use_https)
            except OperationalError:
                log.warning("the broker does not answer: the password reset mail goes now")
                send_password_reset(email, domain, use_https)

        transaction.on_commit(queue)
