from django.contrib import admin
from django.contrib.auth.views import PasswordResetView
from django.urls import include, path

from accounts.forms import QueuedPasswordResetForm
from portal.client import client_archive
from submissions.refchecks.views import agents_page

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path(  # before Django's own: its mail is sent by a worker (accounts/forms.py)
        "accounts/password_reset/",
        PasswordResetView.as_view(form_class=QueuedPasswordResetForm),
        name="password_reset",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", include("portal.api")),
    path("submissions/", include("submissions.urls")),
    path("review/", include("submissions.review.urls")),
    path("agents/", agents_page, name="agents"),
    path("", include("notifications.urls")),
    path("client/portal-submit.tar.gz", client_archive, name="client-archive"),
    path("", include("leaderboard.urls")),
]

# What no view answered (a body too large, an unknown address, an internal error): JSON under /api/.
handler400 = "portal.errors.bad_request"
handler403 = "portal.errors.permission_denied"
handler404 = "portal.errors.page_not_found"
handler500 = "portal.errors.server_error"
