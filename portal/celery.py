"""The Celery app: configured from Django settings (CELERY_*), tasks found in the apps and in the
submissions app's rooms; RETRY, the options of every task that works on the database."""

import os

from celery import Celery
from django.db import InterfaceError, OperationalError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # each app's tasks.py
app.autodiscover_tasks(  # each room's tasks.py (submissions/*/tasks.py)
    [f"submissions.{room}" for room in ("intake", "checking", "review", "refchecks")]
)

# A dropped or refused database connection is worth a retry; the task is acknowledged once it ends, so
# a worker that dies part-way leaves it to another (the steps claim their work: nothing is done twice).
TRANSIENT = (OperationalError, InterfaceError)
RETRY = dict(acks_late=True, autoretry_for=TRANSIENT, retry_backoff=True, max_retries=5)

# The embedded file-system transport needs its folders before the first message.
for _key in ("data_folder_in", "data_folder_out"):
    _folder = app.conf.broker_transport_options.get(_key)
    if _folder:
        os.makedirs(_folder, exist_ok=True)
