from django.urls import include, path

from . import api, views

app_name = "leaderboard"
urlpatterns = [
    path("", views.home, name="home"),
    path("progress/", views.progress_page, name="progress"),
    path("api/", include(api.urlpatterns)),
    path("id/<str:public_id>", views.public_id_page, name="public-id"),
    path("r/<str:round_key>/", views.round_page, name="round"),
    path("r/<str:round_key>/compare/", views.compare_page, name="compare"),
    path("r/<str:round_key>/<str:submitter>/<str:system_key>/", views.system_page, name="system"),
    path(
        "r/<str:round_key>/<str:submitter>/<str:system_key>/<slug:benchmark_key>/",
        views.result_page, name="result",
    ),
]
