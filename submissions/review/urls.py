"""/review/: a round's review, objections' threads, filing an objection, withdrawing."""

from django.urls import path

from . import views

app_name = "review"
urlpatterns = [
    path("", views.index, name="index"),
    path("objections/<uuid:uid>/", views.objection_page, name="objection"),
    path("objections/<uuid:uid>/reply/", views.objection_reply, name="reply"),
    path("objections/<uuid:uid>/decide/", views.objection_decide, name="decide"),
    path("object/<uuid:submission_uid>/", views.new_objection, name="new-objection"),
    path("withdraw/<uuid:submission_uid>/", views.withdraw, name="withdraw"),
    path("<str:round_key>/", views.round_review, name="round"),
]
