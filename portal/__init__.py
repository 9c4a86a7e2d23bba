"""The portal's Django project. Its Celery app (portal.celery) is loaded by SubmissionsConfig.ready(), not here,
so that reading the settings alone stays cheap (see submissions.checking.early_split); `celery -A portal` finds it."""
