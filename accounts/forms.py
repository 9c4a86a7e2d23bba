from django import forms


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. 'CI of the training repository'."
    )
