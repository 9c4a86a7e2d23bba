"""The Celery app: configured from Django settings (CELERY_*), tasks found in the apps."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The embedded file-system transport needs its folders before the first message.
for _key in ("data_folder_in", "data_folder_out"):
    _folder = app.conf.broker_transport_options.get(_key)
    if _folder:
        os.makedirs(_folder, exist_ok=True)
