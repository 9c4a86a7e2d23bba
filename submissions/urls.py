from django.urls import path

from . import views

app_name = "submissions"
urlpatterns = [
    path("", views.submission_list, name="list"),
    path("upload/", views.upload, name="upload"),
    path("<int:pk>/", views.detail, name="detail"),
    path("<int:pk>/progress.json", views.progress, name="progress"),
    path("<int:pk>/findings.json", views.findings_json, name="findings"),
    path("<int:pk>/revalidate/", views.revalidate, name="revalidate"),
]
