"""A user's own API tokens (make one, its key shown once; list; revoke), the invitations they may accept
or decline, and their organisations' pages (members; admins invite, change and remove them). What a
user may not see answers 404."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from leaderboard.access import policy

from . import members
from .forms import MemberForm, TokenForm
from .models import ApiToken, Invitation, Membership, Organisation
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
            "memberships": request.user.memberships.select_related("organisation"),
            "invitations": request.user.invitations.select_related("organisation"),
        },
        status=201 if key else 200,
    )


@require_POST
@login_required
def revoke_token(request, uid):
    token = get_object_or_404(ApiToken, uid=uid, user=request.user)  # another's: 404, as none
    if revoke(token, request.user):
        messages.success(request, gettext("Token “%(name)s” is revoked.") % {"name": token.name})
    return redirect("accounts:tokens")


def _organisation(request, slug) -> Organisation:
    organisation = get_object_or_404(Organisation, slug=slug)
    if not policy.may_see_members(policy.viewer(request.user), organisation):
        raise Http404("No organisation matches the given query.")
    return organisation


@login_required
def organisation(request, slug):
    organisation = _organisation(request, slug)
    manage = policy.may_manage_members(policy.viewer(request.user), organisation)
    form = MemberForm(request.POST or None)
    if request.method == "POST":
        if not manage:
            raise Http404("No organisation matches the given query.")
        if form.is_valid():
            name = form.cleaned_data["username"]
            try:
                members.invite(request.user, organisation, name, form.cleaned_data["role"])
            except members.NotAllowed as error:
                form.add_error("username", str(error))
            else:
                messages.success(request, gettext(members.INVITED).format(name=name))
                return redirect("accounts:organisation", slug=slug)
    return render(
        request,
        "accounts/organisation.html",
        {
            "organisation": organisation,
            "memberships": organisation.memberships.select_related("user").order_by(
                "user__username"
            ),
            "manage": manage,
            "form": form,
            "roles": Membership.Role.choices,
        },
    )


@require_POST
@login_required
def membership(request, slug, membership_id):
    organisation = _organisation(request, slug)
    if not policy.may_manage_members(policy.viewer(request.user), organisation):
        raise Http404("No organisation matches the given query.")
    held = get_object_or_404(Membership, pk=membership_id, organisation=organisation)
    try:
        if request.POST.get("action") == "remove":
            members.remove(request.user, held)
            messages.success(
                request,
                gettext("%(user)s is no longer a member.") % {"user": held.user.get_username()},
            )
        elif request.POST.get("role") in Membership.Role.values:
            members.change_role(request.user, held, request.POST["role"])
    except members.NotAllowed as error:
        messages.error(request, str(error))
    return redirect("accounts:organisation", slug=slug)


@require_POST
@login_required
def invitation(request, uid):
    """The invited user accepts (action=accept) or declines an invitation of theirs."""
    held = get_object_or_404(Invitation, uid=uid, user=request.user)  # another's: 404, as none
    try:
        if request.POST.get("action") == "accept":
            members.accept(request.user, held)
            messages.success(
                request,
                gettext("You are a member of %(organisation)s now.")
                % {"organisation": held.organisation.name},
            )
        else:
            members.decline(request.user, held)
            messages.success(
                request,
                gettext("You declined %(organisation)s's invitation.")
                % {"organisation": held.organisation.name},
            )
    except members.NotAllowed as error:
        messages.error(request, str(error))
    return redirect("accounts:tokens")
