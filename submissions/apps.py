from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "submissions"
    verbose_name = "Submissions"

    def ready(self):
        # The public result page lists findings without leaderboard importing this app.
        from leaderboard import panels

        from .reports import findings_by_result

        panels.register_findings(findings_by_result)
