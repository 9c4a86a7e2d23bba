from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "For a local DEBUG portal only: create the user admin/admin if there are no users."

    def handle(self, *args, **options):
        User = get_user_model()
        if not settings.DEBUG or User.objects.exists():
            return
        User.objects.create_superuser("admin", "admin@localhost", "admin")
        self.stdout.write("Created the local staff user admin (password admin) for uploads.")
