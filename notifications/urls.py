from django.urls import path

from . import views

app_name = "notifications"
urlpatterns = [
    path("notifications/", views.notification_list, name="list"),
    path("notifications/read/", views.mark_read, name="read"),
    path("notifications/preferences/", views.preferences, name="preferences"),
    path("notifications/unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
]
