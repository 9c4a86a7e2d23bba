"""The portal's Django project. Its Celery app (portal.celery) is loaded by SubmissionsConfig.ready(), not here;
`celery -A portal` finds it."""
