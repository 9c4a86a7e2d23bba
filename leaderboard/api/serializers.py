"""Serializers of the read API: flat, with the names the pages use and a link to each page.

Ids are uids or public ids, never primary keys (a pk counts rows and can be guessed).
"""

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ..access.public import findings_note
from ..catalogue import calendar, findings_words
from ..catalogue.units import minutes
from ..models import Benchmark, CloudPrice, Result, Round, Run, System

ORGANISATION_HELP = (
    "The organisation the submitter name belongs to, the same under every name it submitted as."
)


class BenchmarkSerializer(serializers.ModelSerializer):
    class Meta:
        model = Benchmark
        fields = [
            "key",
            "name",
            "quality_target",
            "higher_is_better",
            "required_runs",
            "reference_time_s",
        ]


class RoundSerializer(serializers.ModelSerializer):
    # A SlugField in the model, but round keys have dots (training-v5.1): no slug pattern here.
    key = serializers.CharField(help_text="e.g. training-v5.1")
    benchmarks = BenchmarkSerializer(many=True, read_only=True)
    phase = serializers.SerializerMethodField(
        help_text="Where the round is in its calendar now: upcoming, open (uploads taken), grace "
        "(after the deadline, still taken), review (peer review; nothing public yet), published, "
        "or history (imported, with no calendar)."
    )
    url = serializers.SerializerMethodField(help_text="The round's page.")
    results_url = serializers.SerializerMethodField(help_text="The round's results in the API.")

    class Meta:
        model = Round
        fields = [
            "key",
            "name",
            "ruleset",
            "submission_date",
            "publication_date",
            "reference_system",
            "history",
            "notes",
            "phase",
            "opens_at",
            "deadline_at",
            "grace_minutes",
            "review_ends_at",
            "publish_at",
            "published_at",
            "benchmarks",
            "url",
            "results_url",
        ]

    @extend_schema_field({"type": "string", "enum": list(calendar.PHASES)})
    def get_phase(self, obj) -> str:
        return obj.phase(timezone.now())

    def get_url(self, obj) -> str:
        return self.context["request"].build_absolute_uri(obj.get_absolute_url())

    def get_results_url(self, obj) -> str:
        """The round's results in the API."""
        return self.context["request"].build_absolute_uri(
            f"{reverse('v1:result-list')}?round={obj.key}"
        )


class SystemSerializer(serializers.ModelSerializer):
    round = serializers.CharField(source="round.key")
    submitter = serializers.CharField(source="submitter.name", help_text="The name as submitted.")
    organisation = serializers.CharField(
        source="submitter.organisation", help_text=ORGANISATION_HELP
    )
    url = serializers.SerializerMethodField()

    class Meta:
        model = System
        fields = [
            "uid",
            "round",
            "submitter",
            "published_submitter",
            "organisation",
            "key",
            "name",
            "division",
            "category",
            "accelerator_model",
            "accelerator_count",
            "processor_model",
            "processor_count",
            "nodes",
            "framework",
            "interconnect",
            "url",
        ]

    def get_url(self, obj) -> str:
        url = obj.get_absolute_url()
        if (obj.round_id, obj.submitter_id, obj.key) in self.context.get("shared", ()):
            url += f"?system={obj.uid}"  # published side by side (api.shared_system_addresses)
        return self.context["request"].build_absolute_uri(url)


class ResultSerializer(serializers.ModelSerializer):
    round = serializers.CharField(source="system.round.key")
    submitter = serializers.CharField(
        source="system.submitter.name", help_text="The name as submitted."
    )
    organisation = serializers.CharField(
        source="system.submitter.organisation", help_text=ORGANISATION_HELP
    )
    system = serializers.CharField(source="system.key")
    system_uid = serializers.UUIDField(source="system.uid")
    system_name = serializers.CharField(source="system.name")
    division = serializers.CharField(source="system.division")
    category = serializers.CharField(source="system.category")
    accelerator_model = serializers.CharField(source="system.accelerator_model")
    accelerator_count = serializers.IntegerField(source="system.accelerator_count", allow_null=True)
    benchmark = serializers.CharField(source="benchmark.key")
    score_minutes = serializers.SerializerMethodField()
    energy_kj = serializers.SerializerMethodField(
        help_text="Energy to train in kJ (MLPerf Power results): the mean of the counted runs' energies, "
        "times the RCP factor."
    )
    energy_per_accelerator_kj = serializers.SerializerMethodField(
        help_text="Energy to train per accelerator, kJ."
    )
    findings = serializers.SerializerMethodField(
        help_text="What a reader should know of the result's findings, e.g. '1 warning' ('' for none)."
    )
    findings_summary = serializers.SerializerMethodField(
        help_text="The result's findings in one line of plain words, as its page says them."
    )
    url = serializers.SerializerMethodField(help_text="The result's page.")
    api_url = serializers.SerializerMethodField(help_text="The result in the API, with its runs.")
    runs_url = serializers.SerializerMethodField()

    class Meta:
        model = Result
        fields = [
            "public_id",
            "uid",
            "round",
            "submitter",
            "organisation",
            "system",
            "system_uid",
            "system_name",
            "division",
            "category",
            "accelerator_model",
            "accelerator_count",
            "benchmark",
            "score_s",
            "score_minutes",
            "speedup",
            "scaling_factor",
            "claimed_scaling_factor",
            "score_message",
            "power_result",
            "energy_j",
            "energy_kj",
            "energy_per_accelerator_kj",
            "energy_message",
            "runs_counted",
            "error_count",
            "warning_count",
            "advisory",
            "findings",
            "findings_summary",
            "url",
            "api_url",
            "runs_url",
        ]

    def get_score_minutes(self, obj) -> float | None:
        return None if obj.score_s is None else round(minutes(obj.score_s), 4)

    def get_energy_kj(self, obj) -> float | None:
        return None if obj.energy_j is None else round(obj.energy_j / 1000, 3)

    def get_energy_per_accelerator_kj(self, obj) -> float | None:
        count = obj.system.accelerator_count
        return None if obj.energy_j is None or not count else round(obj.energy_j / 1000 / count, 3)

    def get_url(self, obj) -> str:
        url = obj.get_absolute_url()
        address = (obj.system.round_id, obj.system.submitter_id, obj.system.key, obj.benchmark_id)
        if address in self.context.get("shared", ()):  # published side by side: ?system picks it
            url += f"?system={obj.system.uid}"
        return self.context["request"].build_absolute_uri(url)

    def get_findings(self, obj) -> str:
        return findings_note(obj.error_count, obj.warning_count, obj.advisory)

    def get_findings_summary(self, obj) -> str:
        return findings_words.summary(self._findings_of(obj), obj.advisory)

    def _findings_of(self, obj) -> list[dict]:
        """From the page's one call to leaderboard.panels (the view puts it in the context)."""
        return (self.context.get("findings") or {}).get(obj.id, [])

    def get_api_url(self, obj) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("v1:result-detail", args=[obj.public_id or obj.uid])
        )

    def get_runs_url(self, obj) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("v1:result-runs", args=[obj.public_id or obj.uid])
        )


class RunSerializer(serializers.ModelSerializer):
    minutes = serializers.SerializerMethodField()
    energy_kj = serializers.SerializerMethodField(
        help_text="Energy to train in kJ, from the run's power logs (MLPerf Power results)."
    )

    class Meta:
        model = Run
        fields = [
            "index",
            "path",
            "success",
            "failure_reason",
            "time_to_train_s",
            "minutes",
            "status",
            "seed",
            "counted",
            "dropped",
            "energy_j",
            "energy_kj",
            "eval_x",
            "eval_curve",
            "hyperparameters",
        ]

    def get_minutes(self, obj) -> float | None:
        return None if obj.time_to_train_s is None else round(minutes(obj.time_to_train_s), 4)

    def get_energy_kj(self, obj) -> float | None:
        return None if obj.energy_j is None else round(obj.energy_j / 1000, 3)


class PriceSerializer(serializers.ModelSerializer):
    round = serializers.CharField(source="round.key")

    class Meta:
        model = CloudPrice
        fields = [
            "uid",
            "round",
            "reference",
            "submitter",
            "system_key",
            "system_name",
            "provider",
            "instance",
            "price_per_hour",
            "currency",
            "as_of",
            "source",
            "status",
            "notes",
        ]


class ReaderFindingSerializer(serializers.Serializer):
    """A finding as public pages show it: the checker's rule expressions put in words."""

    severity = serializers.CharField()
    kind = serializers.CharField(help_text="What kind of finding it is, in words.")
    rule = serializers.CharField()
    file = serializers.CharField(allow_blank=True)
    line = serializers.IntegerField(allow_null=True)
    message = serializers.CharField(allow_blank=True)
    hint = serializers.CharField(allow_blank=True)


class ResultDetailSerializer(ResultSerializer):
    runs = RunSerializer(many=True, read_only=True, help_text="In index order.")
    findings_list = serializers.SerializerMethodField(help_text="Each finding, in words.")

    class Meta(ResultSerializer.Meta):
        fields = [*ResultSerializer.Meta.fields, "findings_list", "runs"]

    @extend_schema_field(ReaderFindingSerializer(many=True))
    def get_findings_list(self, obj) -> list[dict]:
        return ReaderFindingSerializer(
            findings_words.for_readers(self._findings_of(obj)), many=True
        ).data
