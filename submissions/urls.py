from django.urls import path

from . import views

app_name = "submissions"
urlpatterns = [
    path("", views.submission_list, name="list"),
    path("upload/", views.upload, name="upload"),
    path("<uuid:uid>/", views.detail, name="detail"),
    path("<uuid:uid>/progress.json", views.progress, name="progress"),
    path("<uuid:uid>/findings.json", views.findings_json, name="findings"),
    path("<uuid:uid>/revalidate/", views.revalidate, name="revalidate"),
]
