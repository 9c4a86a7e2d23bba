from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", include("portal.api")),
    path("submissions/", include("submissions.urls")),
    path("review/", include("submissions.review_urls")),
    path("", include("leaderboard.urls")),
]
