from django import forms

from .models import Membership


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. 'CI of the training repository'."
    )


class MemberForm(forms.Form):
    """An invitation: the user named accepts it (accounts/members.py). Whether that user exists is not
    said, so that the form tells an organisation admin no usernames."""

    username = forms.CharField(max_length=150, help_text="The user's name on this portal.")
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)

    def clean_username(self):
        return self.cleaned_data["username"].strip()
