"""The reference checks' API endpoints, routed under /api/v1/ by portal.api.router (ROUTE_MODULES):
reference-checks (a result's checks, as the pages show them) and, for staff, agents."""

import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, pagination, serializers, status, viewsets
from rest_framework.response import Response

from leaderboard.access import policy
from leaderboard.models import Result

from . import jobs
from .models import Agent, ReferenceCheck


class Pages(pagination.PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


class ReferenceCheckSerializer(serializers.Serializer):
    """A check as the pages show it (jobs.as_dict), with the result it is of. The fields are declared for
    the schema; the values are as_dict's."""

    uid = serializers.UUIDField()
    state = serializers.ChoiceField(choices=ReferenceCheck.State.choices)
    state_label = serializers.CharField(help_text='e.g. "waiting for an agent with NVIDIA H100"')
    waiting = serializers.BooleanField(help_text="Queued, and no agent of its queue is online.")
    family = serializers.CharField(help_text="The claimed accelerator's family.")
    queue = serializers.CharField()
    any_agent = serializers.BooleanField(help_text="Sent by staff to any agent.")
    attempts = serializers.IntegerField()
    agent = serializers.CharField(help_text="The agent that measured it.")
    measured_on = serializers.CharField(help_text="That agent's accelerator.")
    measured = serializers.FloatField(allow_null=True, help_text="samples/s per accelerator")
    implied = serializers.FloatField(allow_null=True, help_text="samples/s per accelerator")
    implied_runs = serializers.JSONField()
    ratio = serializers.FloatField(allow_null=True, help_text="implied ÷ measured")
    tolerance = serializers.FloatField(allow_null=True)
    verdict = serializers.ChoiceField(choices=ReferenceCheck.Verdict.choices, allow_blank=True)
    verdict_label = serializers.CharField()
    message = serializers.CharField()
    probe = serializers.JSONField(help_text="What the probe ran: model, shapes, steps, dtype...")
    request = serializers.JSONField(help_text="What the agent was asked.")
    reason = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    result = serializers.JSONField(help_text="round, submitter, system, benchmark, public_id...")

    def to_representation(self, check):
        result, system = check.result, check.result.system
        data = jobs.as_dict(check, self.context["queues"])
        if not self.context.get("agents_shown"):
            data["agent"] = ""  # the agents' host names are for staff (policy.may_see_agents)
        for key in ("created_at", "finished_at"):
            data[key] = data[key].isoformat() if data[key] else None
        data["uid"] = str(check.uid)
        data["result"] = {
            "uid": str(result.uid),
            "round": system.round.key,
            "submitter": system.submitter.name if system.submitter else "",
            "system": system.key,
            "benchmark": result.benchmark.key,
            "public_id": result.public_id or None,
            "accelerator": system.accelerator_model,
            "accelerator_count": system.accelerator_count,
        }
        return data


class ReferenceCheckFilter(django_filters.FilterSet):
    round = django_filters.CharFilter(field_name="result__system__round__key")
    benchmark = django_filters.CharFilter(field_name="result__benchmark__key")
    state = django_filters.ChoiceFilter(choices=ReferenceCheck.State.choices)
    verdict = django_filters.ChoiceFilter(choices=ReferenceCheck.Verdict.choices)
    family = django_filters.CharFilter()
    result = django_filters.UUIDFilter(field_name="result__uid", help_text="The result's uid.")
    public_id = django_filters.CharFilter(field_name="result__public_id", help_text="e.g. 5.1-0042")

    class Meta:
        model = ReferenceCheck
        fields = ["round", "benchmark", "state", "verdict", "family", "result", "public_id"]


class CheckRequestSerializer(serializers.Serializer):
    result = serializers.UUIDField(help_text="The result's uid.")
    any_agent = serializers.BooleanField(
        default=False, help_text="Send it to any agent (labelled other hardware), not the family's."
    )


class ReferenceCheckViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Reference checks, newest first, of the results the user may see (published ones; a member's own
    organisation's; a round's reviewers that round's; staff all). Staff POST {"result": uid, "any_agent": false} to check any result again."""

    serializer_class = ReferenceCheckSerializer
    filterset_class = ReferenceCheckFilter
    pagination_class = Pages
    # Anyone reads (the queryset decides what); staff ask for a check.
    permission_classes = [policy.ReadOnly | policy.permission(policy.may_request_check)]
    lookup_field = "uid"

    @extend_schema(request=CheckRequestSerializer, responses={201: ReferenceCheckSerializer})
    def create(self, request, *args, **kwargs):
        asked = CheckRequestSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        result = Result.objects.filter(uid=asked.validated_data["result"]).first()
        if result is None:
            raise serializers.ValidationError({"result": "No result has this uid."})
        if asked.validated_data["any_agent"]:
            check = jobs.send_to_any_agent(result, request.user)
        else:
            check = jobs.plan(result, reason="requested by staff", user=request.user)
        check = self.get_queryset().get(pk=check.pk)
        return Response(self.get_serializer(check).data, status=status.HTTP_201_CREATED)

    def get_queryset(self):
        checks = ReferenceCheck.objects.select_related(
            "result__system__round", "result__system__submitter", "result__benchmark", "agent"
        ).order_by("-created_at", "-pk")
        # Those of the results the user may see (leaderboard.access.policy: public ones, their organisation's...).
        return checks.filter(policy.reference_check_filter(policy.viewer(self.request.user)))

    def get_serializer_context(self):
        return {
            **super().get_serializer_context(),
            "queues": jobs.online_queues(),
            "agents_shown": policy.may_see_agents(policy.viewer(self.request.user)),
        }


class AgentSerializer(serializers.ModelSerializer):
    online = serializers.SerializerMethodField()

    class Meta:
        model = Agent
        fields = [
            "uid",
            "hostname",
            "online",
            "last_seen",
            "first_seen",
            "queues",
            "accelerator",
            "family",
            "accelerator_count",
            "memory_bytes",
            "driver",
            "cuda",
            "torch",
            "current_job",
            "jobs_done",
            "jobs_failed",
        ]

    def get_online(self, agent) -> bool:
        return agent.pk in self.context["online"]


class AgentViewSet(viewsets.ReadOnlyModelViewSet):
    """The GPU agents (staff only): online or offline, last seen, accelerator, jobs done and failed, the
    current job."""

    serializer_class = AgentSerializer
    permission_classes = [policy.permission(policy.may_see_agents)]
    pagination_class = Pages
    lookup_field = "uid"
    queryset = Agent.objects.order_by("hostname")

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "online": {a.pk for a in jobs.online_agents()}}


ROUTES = [
    ("reference-checks", ReferenceCheckViewSet, "reference-check"),
    ("agents", AgentViewSet, "agent"),
]
