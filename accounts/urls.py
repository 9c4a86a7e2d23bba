from django.urls import path

from . import views

app_name = "accounts"
urlpatterns = [
    path("tokens/", views.tokens, name="tokens"),
    path("tokens/<uuid:uid>/revoke/", views.revoke_token, name="revoke-token"),
    path("invitations/<uuid:uid>/", views.invitation, name="invitation"),
    path("organisations/<slug:slug>/", views.organisation, name="organisation"),
    path(
        "organisations/<slug:slug>/members/<int:membership_id>/",
        views.membership,
        name="membership",
    ),
]
