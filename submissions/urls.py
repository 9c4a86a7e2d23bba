from django.urls import path

from submissions.refchecks import views as refcheck_views
from submissions.review import staff_views

from . import views

app_name = "submissions"
urlpatterns = [
    path("", views.submission_list, name="list"),
    path("upload/", views.upload, name="upload"),
    path("rounds/", staff_views.rounds, name="rounds"),
    path("rounds/<str:round_key>/publish/", staff_views.publish_now, name="publish-round"),
    path("rounds/<str:round_key>/import/", views.import_round, name="import-round"),
    path("<uuid:uid>/", views.detail, name="detail"),
    path("<uuid:uid>/receipt/", views.receipt, name="receipt"),
    path("<uuid:uid>/progress.json", views.progress, name="progress"),
    path("<uuid:uid>/findings.json", views.findings_json, name="findings"),
    path("<uuid:uid>/revalidate/", views.revalidate, name="revalidate"),
    path("<uuid:uid>/reference-checks/", refcheck_views.request_check, name="reference-check"),
]
