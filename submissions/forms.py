from django import forms

from leaderboard.models import Round

BUNDLE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".zip")


class UploadForm(forms.Form):
    round = forms.ModelChoiceField(
        queryset=Round.objects.all(), to_field_name="key", empty_label=None
    )
    bundle = forms.FileField(
        help_text="Your organisation's tree as .tar, .tar.gz, .tgz, .tar.xz or .zip "
        "(systems/ and results/ folders, or the v0.5 layout)."
    )

    def clean_bundle(self):
        bundle = self.cleaned_data["bundle"]
        if not bundle.name.lower().endswith(BUNDLE_SUFFIXES):
            raise forms.ValidationError(
                f"“{bundle.name}” is not a bundle: upload one of {', '.join(BUNDLE_SUFFIXES)}."
            )
        return bundle
