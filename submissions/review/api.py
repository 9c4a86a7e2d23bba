"""API v1 of peer review: objections (list and read those the user may see, file, reply, decide) and
withdrawal (`POST /api/v1/submissions/<uid>/withdraw/`). Thin around submissions/review/objections.py: what the
user may not see answers 404, what they see but may not do 403, a refused action 400 with why."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from leaderboard.api.viewsets import Pages
from leaderboard.models import Result
from submissions.models import Submission

from . import objections as review
from . import withdrawals
from .models import Objection, ObjectionReply


def _answer(call):
    """Run a review action; its refusals as the API answers them."""
    try:
        return call()
    except review.NotFound as error:
        raise Http404(str(error)) from None
    except review.NotAllowed as error:
        raise exceptions.PermissionDenied(str(error)) from None
    except review.ReviewError as error:
        raise exceptions.ValidationError({"detail": str(error)}) from None


class ReplySerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.get_username", default=None, read_only=True)

    class Meta:
        model = ObjectionReply
        fields = ["uid", "side", "author", "text", "created_at"]


class ObjectionSerializer(serializers.ModelSerializer):
    round = serializers.SlugRelatedField(slug_field="key", read_only=True)
    submission = serializers.SlugRelatedField(slug_field="uid", read_only=True)
    system = serializers.CharField(source="system.key", read_only=True)
    benchmark = serializers.CharField(source="result.benchmark.key", default=None, read_only=True)
    from_organisation = serializers.CharField(source="from_organisation.name", read_only=True)
    against_organisation = serializers.CharField(source="against_organisation.name", read_only=True)
    fix = serializers.SlugRelatedField(slug_field="uid", read_only=True)
    replies = ReplySerializer(many=True, read_only=True)

    class Meta:
        model = Objection
        fields = [
            "uid",
            "round",
            "submission",
            "system",
            "benchmark",
            "from_organisation",
            "against_organisation",
            "rule",
            "file",
            "lines",
            "comment",
            "status",
            "decision",
            "decision_note",
            "decided_at",
            "fix",
            "created_at",
            "replies",
        ]


class NewObjectionSerializer(serializers.Serializer):
    submission = serializers.UUIDField(help_text="The submission objected to.")
    system = serializers.CharField(max_length=200)
    benchmark = serializers.CharField(
        max_length=50, required=False, allow_blank=True, help_text="Blank: the whole system."
    )
    rule = serializers.CharField(max_length=200)
    file = serializers.CharField(max_length=500, required=False, allow_blank=True)
    lines = serializers.CharField(max_length=50, required=False, allow_blank=True)
    comment = serializers.CharField(max_length=review.TEXT_MAX_CHARS)


class ReplyInSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=review.TEXT_MAX_CHARS)


class DecisionSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=Objection.Decision.choices)
    note = serializers.CharField(required=False, allow_blank=True, max_length=review.TEXT_MAX_CHARS)


class WithdrawSerializer(serializers.Serializer):
    system = serializers.CharField(
        max_length=200, required=False, allow_blank=True, help_text="With benchmark: one result."
    )
    benchmark = serializers.CharField(max_length=50, required=False, allow_blank=True)
    reason = serializers.CharField(
        required=False, allow_blank=True, max_length=review.TEXT_MAX_CHARS
    )


class WithdrawnSerializer(serializers.Serializer):
    submission = serializers.UUIDField()
    status = serializers.CharField()
    withdrawn = serializers.ListField(child=serializers.CharField())


class ObjectionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Objections the user may read: filed by or against their organisations, or of the rounds they
    review (staff: all). `?round=<key>` and `?status=` narrow the list."""

    serializer_class = ObjectionSerializer
    permission_classes = [permissions.IsAuthenticated]
    pagination_class = Pages
    lookup_field = "uid"

    def get_queryset(self):
        objections = review.visible_objections(self.request.user).prefetch_related(
            "replies__author"
        )
        if self.action == "list":
            for name, field in (("round", "round__key"), ("status", "status")):
                if value := self.request.query_params.get(name):
                    objections = objections.filter(**{field: value})
        return objections.order_by("-created_at", "-pk")

    def _thread(self, objection, code=status.HTTP_200_OK):
        fresh = self.get_queryset().get(pk=objection.pk)
        return Response(ObjectionSerializer(fresh).data, status=code)

    @extend_schema(request=NewObjectionSerializer, responses={201: ObjectionSerializer})
    def create(self, request):
        given = NewObjectionSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        submission = (
            Submission.objects.select_related("round").filter(uid=data["submission"]).first()
        )
        if submission is None:
            raise Http404("No submission matches the given query.")
        objection = _answer(
            lambda: review.file_objection(
                request.user,
                submission,
                system_key=data["system"],
                benchmark_key=data.get("benchmark", ""),
                rule=data["rule"],
                comment=data["comment"],
                file=data.get("file", ""),
                lines=data.get("lines", ""),
            )
        )
        return self._thread(objection, status.HTTP_201_CREATED)

    @extend_schema(request=ReplyInSerializer, responses=ObjectionSerializer)
    @action(detail=True, methods=["post"])
    def reply(self, request, uid=None):
        """Answer the objection (its organisation), or reply to it (the objector, a reviewer)."""
        objection = self.get_object()
        given = ReplyInSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        _answer(lambda: review.reply(request.user, objection, given.validated_data["text"]))
        return self._thread(objection)

    @extend_schema(request=DecisionSerializer, responses=ObjectionSerializer)
    @action(detail=True, methods=["post"])
    def decide(self, request, uid=None):
        """A reviewer of the round, of neither organisation, decides; the decision takes effect."""
        objection = self.get_object()
        given = DecisionSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        _answer(
            lambda: review.decide(
                request.user,
                objection,
                given.validated_data["decision"],
                given.validated_data.get("note", ""),
            )
        )
        return self._thread(objection)


class WithdrawViewSet(viewsets.GenericViewSet):
    """Only `POST /api/v1/submissions/<uid>/withdraw/`, beside the submissions' own endpoints."""

    permission_classes = [permissions.IsAuthenticated]
    lookup_field = "uid"
    queryset = Submission.objects.select_related("round", "organisation")
    serializer_class = WithdrawSerializer

    @extend_schema(request=WithdrawSerializer, responses=WithdrawnSerializer)
    @action(detail=True, methods=["post"])
    def withdraw(self, request, uid=None):
        """Withdraw the submission, or one result of it (system and benchmark), before publication."""
        submission = self.get_object()
        given = WithdrawSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        system, benchmark = data.get("system", ""), data.get("benchmark", "")
        reason = data.get("reason", "")
        if system or benchmark:
            _answer(
                lambda: withdrawals.withdraw_result(
                    request.user, submission, system, benchmark, reason
                )
            )
        else:
            _answer(lambda: withdrawals.withdraw_submission(request.user, submission, reason))
        submission.refresh_from_db()
        withdrawn = (
            Result.objects.filter(system__submission=submission, withdrawn=True)
            .order_by("system__key", "benchmark__position")
            .values_list("system__key", "benchmark__key")
        )
        return Response(
            {
                "submission": str(submission.uid),
                "status": submission.status,
                "withdrawn": [f"{s}/{b}" for s, b in withdrawn],
            }
        )


ROUTES = [
    ("objections", ObjectionViewSet, "objection"),
    ("submissions", WithdrawViewSet, "submission-withdraw"),
]
