"""The GPU agent: a Celery worker that runs reference-check probes (agent/README.md).

Nothing here imports Django or the portal's apps: an agent host needs the broker only.
"""
