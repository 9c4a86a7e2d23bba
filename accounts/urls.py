from django.urls import path

from . import views

app_name = "accounts"
urlpatterns = [
    path("", views.tokens, name="tokens"),
    path("<uuid:uid>/revoke/", views.revoke_token, name="revoke-token"),
]
