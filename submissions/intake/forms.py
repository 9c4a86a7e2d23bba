"""The upload form (the page's script sends the same fields through the API's chunked uploads)."""

from django import forms
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.models import Organisation
from leaderboard.access import policy
from leaderboard.catalogue import calendar
from leaderboard.models import Round

BUNDLE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".zip")


class UploadForm(forms.Form):
    round = forms.ModelChoiceField(
        queryset=Round.objects.all(), to_field_name="key", empty_label=None
    )
    organisation = forms.ModelChoiceField(
        queryset=Organisation.objects.none(),
        to_field_name="slug",
        empty_label=None,
        required=False,  # the user's only one, if not named
        help_text=_("The organisation you upload for: one of yours."),
    )
    bundle = forms.FileField(
        help_text=_(
            "Your organisation's tree as .tar, .tar.gz, .tgz, .tar.xz or .zip "
            "(systems/ and results/ folders, or the v0.5 layout)."
        )
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        who = policy.viewer(user)
        self.fields["organisation"].queryset = Organisation.objects.filter(
            pk__in=policy.upload_organisations(who)
        )
        # The list offers the rounds open for submission; a round given by hand (or by the API) is
        # still read, and the calendar's refusal (uploads.calendar_refusal) says why it is not taken.
        history = policy.may_upload_history(who)
        self.fields["round"].widget.choices = [
            (r.key, label)
            for r in Round.objects.all()
            if (label := offered(r, history)) is not None
        ]

    def clean_organisation(self):
        organisation = self.cleaned_data["organisation"]
        mine = self.fields["organisation"].queryset
        if organisation is None and len(mine[:2]) == 1:
            organisation = mine[0]
        if organisation is None:
            raise forms.ValidationError(
                gettext("Choose the organisation you upload for.")
                if mine.exists()
                else gettext(
                    "You upload for an organisation you are a member of, and you are a member of "
                    "none: ask its administrator to add you."
                )
            )
        return organisation

    def clean_bundle(self):
        bundle = self.cleaned_data["bundle"]
        if not bundle.name.lower().endswith(BUNDLE_SUFFIXES):
            raise forms.ValidationError(
                gettext("“%(name)s” is not a bundle: upload one of %(suffixes)s.")
                % {"name": bundle.name, "suffixes": ", ".join(BUNDLE_SUFFIXES)}
            )
        return bundle


def offered(round_: Round, history: bool, now=None) -> str | None:
    """The round's name as the upload form offers it, or None where it is not offered: rounds open
    for submission, in their grace period, or in review (a fix a reviewer asked for); imported history
    only with `history` (policy.may_upload_history: staff, who import it)."""
    phase = round_.phase(now or timezone.now())
    if phase in (calendar.OPEN, calendar.GRACE):
        return round_.name
    if phase == calendar.REVIEW:
        return gettext("%(round)s (in review: a fix a reviewer asked for)") % {"round": round_.name}
    if phase == calendar.HISTORY and (history or not round_.history):
        if round_.history:
            return gettext("%(round)s (imported history)") % {"round": round_.name}
        return round_.name
    return None
