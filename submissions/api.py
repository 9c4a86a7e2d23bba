"""The write side of API v1 (routed by portal/api/router.py): chunked uploads, and the submissions a user may see.

    uploads/                     GET: your uploads (?status=open); POST: start one {round, name, size[, sha256]}
    uploads/<uid>/               HEAD/GET: the offset held; PATCH: the next bytes at Upload-Offset; DELETE
    uploads/<uid>/complete/      POST {sha256}: the bundle becomes a submission (its receipt is mailed)
    submissions/                 the submissions this user may see, with their steps
    submissions/<uid>/           one, with its steps; findings/: its report
The protocol is described in uploads.py.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from leaderboard.access import policy
from leaderboard.api.viewsets import Pages
from leaderboard.models import Round
from submissions.checking.reports import report_dict
from submissions.checking.status import steps_of
from submissions.intake import bodies, receipts, uploads
from submissions.intake.forms import BUNDLE_SUFFIXES

from .models import Submission, Upload
from .visibility import visible_submissions

OFFSET_HEADER = "Upload-Offset"
CHUNK_TYPES = ("application/offset+octet-stream", "application/octet-stream")


class RoundKeyField(serializers.SlugRelatedField):
    """A round by its key. A key with a NUL byte, which PostgreSQL cannot compare, is no round: 400, not 500."""

    def to_internal_value(self, data):
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value=data)
        return super().to_internal_value(data)


class UploadCreateSerializer(serializers.Serializer):
    round = RoundKeyField(slug_field="key", queryset=Round.objects.all())
    organisation = serializers.SlugField(
        required=False,
        help_text="The slug of the organisation you upload for; may be left out if you have only one.",
    )
    name = serializers.CharField(max_length=1000, help_text="The bundle's file name.")
    size = serializers.IntegerField(min_value=1, help_text="The bundle's size in bytes.")
    sha256 = serializers.RegexField(
        r"^[0-9a-fA-F]{64}$",
        required=False,
        allow_blank=True,
        help_text="The bundle's sha256, if known: completion then checks it.",
    )

    def validate_name(self, name):
        if not name.lower().endswith(BUNDLE_SUFFIXES):
            raise serializers.ValidationError(
                f"“{name[:200]}” is not a bundle: upload one of {', '.join(BUNDLE_SUFFIXES)}."
            )
        return name


class UploadSerializer(serializers.ModelSerializer):
    round = serializers.SlugRelatedField(slug_field="key", read_only=True)
    organisation = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    submission = serializers.SerializerMethodField()

    class Meta:
        model = Upload
        fields = [
            "uid",
            "round",
            "organisation",
            "name",
            "size",
            "offset",
            "sha256",
            "status",
            "submission",
        ]

    def get_submission(self, upload) -> str | None:
        return str(upload.submission.uid) if upload.submission_id else None


class CompleteSerializer(serializers.Serializer):
    sha256 = serializers.RegexField(r"^[0-9a-fA-F]{64}$", required=False, allow_blank=True)


class StepSerializer(serializers.Serializer):
    code = serializers.CharField()
    label = serializers.CharField()
    state = serializers.CharField()
    detail = serializers.CharField()


class SubmissionSerializer(serializers.ModelSerializer):
    round = serializers.SlugRelatedField(slug_field="key", read_only=True)
    organisation = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    bundle_name = serializers.CharField(source="original_name", read_only=True)
    received_at = serializers.DateTimeField(source="created_at", read_only=True)
    steps = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()
    receipt_url = serializers.SerializerMethodField()

    class Meta:
        model = Submission
        fields = [
            "uid",
            "round",
            "organisation",
            "bundle_name",
            "size",
            "sha256",
            "received_at",
            "status",
            "message",
            "runs_total",
            "runs_checked",
            "finished_at",
            "steps",
            "url",
            "receipt_url",
        ]

    @extend_schema(responses=StepSerializer(many=True))
    def get_steps(self, submission) -> list[dict]:
        return [step.as_dict() for step in steps_of(submission)]

    def get_url(self, submission) -> str:
        return self.context["request"].build_absolute_uri(submission.get_absolute_url())

    def get_receipt_url(self, submission) -> str:
        return self.context["request"].build_absolute_uri(receipts.receipt_url(submission))


class RefusalSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Why, in words.")
    offset = serializers.IntegerField(
        required=False, help_text="The offset the portal holds (also in the Upload-Offset header)."
    )


def _refusals(*codes) -> dict:
    words = {
        403: "Refused: an organisation you are not (or no longer) a member of, or the round's "
        "calendar (with the date).",
        409: "Not at the offset the portal holds; the upload is complete (a complete with another "
        "sha256, a DELETE); or too many uploads open (UPLOAD_OPEN_PER_MEMBER, _PER_ORGANISATION).",
        413: "Past UPLOAD_MAX_BYTES, or past the upload's declared size: nothing written.",
        415: "The bytes must be sent as application/offset+octet-stream.",
    }
    return {code: OpenApiResponse(RefusalSerializer, description=words[code]) for code in codes}


def _refused(error: uploads.UploadRefused) -> Response:
    response = Response({"detail": str(error), **error.facts}, status=error.status)
    if "offset" in error.facts:
        response[OFFSET_HEADER] = str(error.facts["offset"])
    return response


def _offset_response(upload: Upload, code=status.HTTP_200_OK, data=None) -> Response:
    response = Response(data, status=code)
    response[OFFSET_HEADER] = str(upload.offset)
    response["Upload-Length"] = str(upload.size)
    response["Cache-Control"] = "no-store"
    return response


class UploadViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Chunked, resumable uploads of a bundle (see the module's docstring); the list is your own, newest
    first (`?status=open`: those still receiving, which count against the open-upload quota)."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = UploadSerializer
    pagination_class = Pages
    filterset_fields = ["status"]
    lookup_field = "uid"

    def get_queryset(self):
        # The schema (swagger_fake_view) reads the uid's type from the model.
        if getattr(self, "swagger_fake_view", False):
            return Upload.objects.none()
        mine = policy.viewer(self.request.user).upload_filter()
        return (
            Upload.objects.filter(mine)
            .select_related("round", "organisation", "submission")
            .order_by("-created_at", "-pk")
        )

    def get_serializer_class(self):
        if self.action == "create":
            return UploadCreateSerializer
        if self.action == "complete":
            return CompleteSerializer
        return UploadSerializer

    @extend_schema(
        request=UploadCreateSerializer,
        responses={201: UploadSerializer, **_refusals(403, 409, 413)},
    )
    def create(self, request, *args, **kwargs):
        given = UploadCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        mine = uploads.organisations_of(request.user)
        organisation = (
            mine.filter(slug=data["organisation"]).first()
            if "organisation" in data
            else (mine.first() if len(mine[:2]) == 1 else None)
        )
        if organisation is None:
            return Response(
                {
                    "organisation": "Name one of your organisations (its slug): "
                    + (", ".join(o.slug for o in mine) or "you are a member of none.")
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            upload = uploads.create(
                data["round"],
                request.user,
                organisation,
                data["name"],
                data["size"],
                data.get("sha256", ""),
            )
        except uploads.UploadRefused as error:
            return _refused(error)
        response = _offset_response(upload, status.HTTP_201_CREATED, UploadSerializer(upload).data)
        response["Location"] = request.build_absolute_uri(f"{upload.uid}/")
        return response

    def retrieve(self, request, *args, **kwargs):
        upload = self.get_object()
        return _offset_response(upload, data=UploadSerializer(upload).data)

    @extend_schema(
        request={"application/offset+octet-stream": OpenApiTypes.BINARY},
        parameters=[
            OpenApiParameter(
                OFFSET_HEADER,
                int,
                OpenApiParameter.HEADER,
                required=True,
                description="Where these bytes go.",
            )
        ],
        responses={204: None, **_refusals(403, 409, 413, 415)},
    )
    def partial_update(self, request, *args, **kwargs):
        """The next bytes of the bundle, at Upload-Offset (the offset the portal answered)."""
        upload = self.get_object()
        try:
            offset = int(request.headers.get(OFFSET_HEADER, ""))
            length = int(request.META.get("CONTENT_LENGTH") or "")
        except ValueError:
            return Response(
                {"detail": f"Send the {OFFSET_HEADER} and Content-Length headers, in bytes."},
                status=status.HTTP_400_BAD_REQUEST,
            )
        if offset < 0 or length < 0:
            return Response({"detail": "Offsets and lengths are not negative."}, status=400)
        if request.content_type not in CHUNK_TYPES:
            return Response(
                {"detail": f"Send the bytes as {CHUNK_TYPES[0]}."},
                status=status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
            )
        readinto = bodies.reader(request._request, length)
        try:
            uploads.append(upload, offset, readinto, length)
        except uploads.UploadRefused as error:
            return _refused(error)
        finally:
            # Refused, or cut short by a full disk (507) or a lost database (503): what is left of the
            # part is read and dropped, else a kept-alive connection takes it for the next request.
            bodies.discard(readinto)
        upload.refresh_from_db()
        return _offset_response(upload, status.HTTP_204_NO_CONTENT)

    update = partial_update  # PUT says the same

    @extend_schema(responses={204: None, **_refusals(409)})
    def destroy(self, request, *args, **kwargs):
        """Drop an open upload and its bytes; a complete one is refused (409): withdraw its
        submission instead."""
        try:
            uploads.abandon(self.get_object())
        except uploads.UploadRefused as error:
            return _refused(error)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=CompleteSerializer,
        responses={
            201: SubmissionSerializer,
            200: SubmissionSerializer,
            400: RefusalSerializer,
            **_refusals(403, 409),
        },
    )
    @action(detail=True, methods=["post"])
    def complete(self, request, *args, **kwargs):
        """The bundle is whole: check its sha256 and make it a submission (the same bytes again give back
        the submission they made, with 200)."""
        upload = self.get_object()
        given = CompleteSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            submission, created = uploads.complete(upload, given.validated_data.get("sha256", ""))
        except uploads.UploadRefused as error:
            return _refused(error)
        if created:
            receipts.accepted(submission, request)
        data = SubmissionSerializer(submission, context={"request": request}).data
        response = Response(data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
        response["Location"] = data["url"]
        return response


class SubmissionViewSet(viewsets.ReadOnlyModelViewSet):
    """The submissions you may see, with the steps of their checking."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = SubmissionSerializer
    pagination_class = Pages
    lookup_field = "uid"

    def get_queryset(self):
        return visible_submissions(self.request.user)

    @action(detail=True)
    def findings(self, request, *args, **kwargs):
        """Its report: status, verdict counts and every finding of its latest validation."""
        return Response(report_dict(self.get_object()))


ROUTES = [
    ("uploads", UploadViewSet, "upload"),
    ("submissions", SubmissionViewSet, "submission"),
]
