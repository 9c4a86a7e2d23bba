from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard"

    def ready(self):
        from .models import CloudPrice

        # A price edited (in the admin or anywhere) changes cloud scales: drop the round's cached pages.
        post_save.connect(_price_changed, sender=CloudPrice, dispatch_uid="leaderboard-price-saved")
        post_delete.connect(
            _price_changed, sender=CloudPrice, dispatch_uid="leaderboard-price-deleted"
        )


def _price_changed(sender, instance, **kwargs):
    from .cache import invalidate_round

    invalidate_round(instance.round.key)
