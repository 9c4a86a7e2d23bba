from django.urls import path

from . import views

app_name = "leaderboard"
urlpatterns = [
    path("", views.home, name="home"),
    path("r/<str:round_key>/", views.round_page, name="round"),
    path("r/<str:round_key>/<str:submitter>/<str:system_key>/", views.system_page, name="system"),
    path(
        "r/<str:round_key>/<str:submitter>/<str:system_key>/<slug:benchmark_key>/",
        views.result_page, name="result",
    ),
]
