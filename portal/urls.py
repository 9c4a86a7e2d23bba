from django.contrib import admin
from django.contrib.auth.views import PasswordResetView
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path
from django.views.decorators.http import require_safe
from django.views.i18n import JavaScriptCatalog

from accounts.forms import QueuedPasswordResetForm
from portal.client import client_archive
from submissions.refchecks.views import agents_page


@require_safe
def favicon(request):
    """/favicon.ico, which a browser asks for where the page names no icon (an API answer, a raw log): the
    site's icon (it answered 404, an error in the console of every such page)."""
    response = redirect(static("favicon.svg"))
    response["Cache-Control"] = "public, max-age=86400"
    return response


urlpatterns = [
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path(  # before Django's own: its mail is sent by a worker (accounts/forms.py)
        "accounts/password_reset/",
        PasswordResetView.as_view(form_class=QueuedPasswordResetForm),
        name="password_reset",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", include("portal.api.router")),
    path("submissions/", include("submissions.urls")),
    path("review/", include("submissions.review.urls")),
    path("agents/", agents_page, name="agents"),
    path("", include("notifications.urls")),
    path("client/portal-submit.tar.gz", client_archive, name="client-archive"),
    # The pages' scripts' words (locale/*/LC_MESSAGES/djangojs.po), in the request's language.
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("", include("leaderboard.urls")),
]

# What no view answered (a body too large, an unknown address, an internal error): JSON under /api/.
handler400 = "portal.errors.bad_request"
handler403 = "portal.errors.permission_denied"
handler404 = "portal.errors.page_not_found"
handler500 = "portal.errors.server_error"
