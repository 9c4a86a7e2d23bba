from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "For a local DEBUG portal only: create the user admin/admin if there are no users."

    def handle(self, *args, **options):
        User = get_user_model()
        if not settings.DEBUG or User.objects.exists():
            return
        from accounts.models import Membership, Organisation

        admin = User.objects.create_superuser("admin", "admin@localhost", "admin")
        # Uploads are made for one's own organisation: give the demo's user one, as its admin.
        demo, _ = Organisation.objects.get_or_create(name="Demo organisation")
        Membership.objects.create(user=admin, organisation=demo, role=Membership.Role.ADMIN)
        self.stdout.write(
            "Created the local staff user admin (password admin), admin of the Demo organisation, "
            "for uploads."
        )
