"""A user's own API tokens: make one (its key shown once), list them, revoke one."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .forms import TokenForm
from .models import ApiToken
from .tokens import issue, revoke


@login_required
def tokens(request):
    form = TokenForm(request.POST or None)
    key = None
    if request.method == "POST" and form.is_valid():
        token, key = issue(request.user, form.cleaned_data["name"])
        form = TokenForm()
    return render(
        request,
        "accounts/tokens.html",
        {
            "form": form,
            "key": key,  # shown in this answer only: it is not stored
            "tokens": ApiToken.objects.filter(user=request.user),
        },
        status=201 if key else 200,
    )


@require_POST
@login_required
def revoke_token(request, uid):
    token = get_object_or_404(ApiToken, uid=uid, user=request.user)  # another's: 404, as none
    if revoke(token, request.user):
        messages.success(request, f"Token “{token.name}” is revoked.")
    return redirect("accounts:tokens")
