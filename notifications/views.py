"""A user's notifications in the site, their preferences, and the one-click unsubscribe of a mail."""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from .events import EVENTS
from .models import Channel, Notification
from .preferences import (
    choose,
    choose_language,
    languages,
    read_unsubscribe_token,
    stop_mail,
    table,
)


@login_required
def notification_list(request):
    mine = Notification.objects.filter(recipient=request.user, in_site=True)
    page = Paginator(mine, 50).get_page(request.GET.get("page"))
    return render(request, "notifications/list.html", {"page": page})


@login_required
@require_POST
def mark_read(request):
    """Mark one notification (`id`) or all of them read."""
    mine = Notification.objects.filter(recipient=request.user, read_at__isnull=True)
    if request.POST.get("id"):
        if not request.POST["id"].isdigit():
            return HttpResponseBadRequest(gettext("id: a notification's number."))
        mine = mine.filter(pk=int(request.POST["id"]))
    mine.update(read_at=timezone.now())
    return redirect("notifications:list")


@login_required
def preferences(request):
    saved = False
    if request.method == "POST":
        for kind, _, _ in table(request.user):
            channel = request.POST.get(kind)
            if channel in Channel.values:
                choose(request.user, kind, channel)
        if request.POST.get("language") in dict(settings.LANGUAGES):
            choose_language(request.user, request.POST["language"])
        saved = True
    return render(
        request,
        "notifications/preferences.html",
        {
            "rows": table(request.user),
            "channels": Channel.choices,
            "saved": saved,
            "told_in": languages([request.user.pk])[request.user.pk],
            "told_in_choices": settings.LANGUAGES,
        },
        status=200,
    )


@csrf_exempt  # the signed token is the proof (a mail program's one-click POST has no session, RFC 8058)
def unsubscribe(request, token):
    found = read_unsubscribe_token(token)
    if found is None:
        return render(request, "notifications/unsubscribe.html", {"bad": True}, status=400)
    user_id, kinds = found
    done = request.method == "POST"
    if done:
        for kind in kinds:
            stop_mail(user_id, kind)
    return render(
        request,
        "notifications/unsubscribe.html",
        {
            "label": ", ".join(str(EVENTS[kind].label) for kind in kinds),
            "done": done,
            "token": token,
        },
    )
