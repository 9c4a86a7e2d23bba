from django import forms
from django.contrib.auth import get_user_model

from .models import Membership


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. 'CI of the training repository'."
    )


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150, help_text="The user's name on this portal.")
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=name, is_active=True).first()
        if user is None:
            raise forms.ValidationError(f"No user {name!r} here: they sign up or are made first.")
        return user
