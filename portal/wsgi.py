import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
application = get_wsgi_application()

from portal.heap import freeze_after_first_request  # noqa: E402 (Django is set up above)

freeze_after_first_request()
