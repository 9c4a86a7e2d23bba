from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard"

    def ready(self):
        from .models import CloudPrice, Round

        # A price edited (in the admin or anywhere) changes cloud scales: drop the round's cached pages.
        post_save.connect(_price_changed, sender=CloudPrice, dispatch_uid="leaderboard-price-saved")
        post_delete.connect(
            _price_changed, sender=CloudPrice, dispatch_uid="leaderboard-price-deleted"
        )
        # A round saved or deleted in this process: its page reads it again (leaderboard.cache).
        post_save.connect(_round_changed, sender=Round, dispatch_uid="leaderboard-round-saved")
        post_delete.connect(_round_changed, sender=Round, dispatch_uid="leaderboard-round-deleted")


def _price_changed(sender, instance, **kwargs):
    from .cache import invalidate_round

    invalidate_round(instance.round.key)


def _round_changed(sender, instance, **kwargs):
    from .cache import forget_round

    forget_round(instance.key)
