from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "submissions"
    verbose_name = "Submissions"

    def ready(self):
        # The project's Celery app, so that this app's tasks queue with its settings (Celery's docs load it in
        # portal/__init__.py; here, reading the settings alone does not import Celery).
        import portal.celery  # noqa: F401

        # The public result page lists findings without leaderboard importing this app.
        from leaderboard import panels
        from submissions.checking.reports import findings_by_result
        from submissions.checking.stored import opener
        from submissions.refchecks.jobs import by_result

        panels.register_findings(findings_by_result)
        panels.register_logs(opener)
        panels.register_reference_checks(by_result)

        # An upload asked for by a reviewer answers the objections waiting for it.
        from django.db.models.signals import post_save

        from submissions.review.objections import answer_with_fix

        from .models import Submission

        post_save.connect(answer_with_fix, sender=Submission, dispatch_uid="review.answer_with_fix")
