"""A user's notifications and preferences through the API (routed by portal.api.router):

GET  /api/v1/notifications/                  yours, newest first (unread ones have read_at null)
POST /api/v1/notifications/read/             mark all read, or those whose ids are in "ids"
GET  /api/v1/notification-preferences/       every event: kind, label, channel
PUT  /api/v1/notification-preferences/{kind}/  {"channel": "email" | "site" | "both" | "none"}
GET  /api/v1/notification-preferences/language/  the language you are told in: {"language": "en-gb"}
PUT  /api/v1/notification-preferences/language/  {"language": "en-gb" | "zh-hans"}
"""

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import mixins, permissions, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response

from accounts.models import Organisation
from leaderboard.access import policy

from .channels import webhooks
from .events import EVENTS
from .models import Channel, Notification, Webhook, WebhookDelivery
from .preferences import choose, choose_language, languages, table


class NotificationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Notification
        fields = ["id", "kind", "title", "text", "url", "created_at", "read_at"]


class Pages(PageNumberPagination):
    page_size = 50


class NotificationViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Your notifications in the site, newest first, 50 a page."""

    serializer_class = NotificationSerializer
    pagination_class = Pages
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Notification.objects.none()
        return Notification.objects.filter(recipient=self.request.user, in_site=True)

    @extend_schema(
        request=inline_serializer(
            "MarkRead",
            {"ids": serializers.ListField(child=serializers.IntegerField(), required=False)},
        ),
        responses=inline_serializer("Marked", {"marked": serializers.IntegerField()}),
    )
    @action(detail=False, methods=["post"])
    def read(self, request):
        """Mark all your unread notifications read, or those listed in "ids"."""
        unread = self.get_queryset().filter(read_at__isnull=True)
        ids = request.data.get("ids")
        if ids is not None:
            if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
                raise serializers.ValidationError({"ids": gettext("A list of notification ids.")})
            unread = unread.filter(pk__in=ids)
        return Response({"marked": unread.update(read_at=timezone.now())})


class PreferenceSerializer(serializers.Serializer):
    kind = serializers.CharField(read_only=True)
    label = serializers.CharField(read_only=True)
    channel = serializers.ChoiceField(choices=Channel.choices)


class LanguageSerializer(serializers.Serializer):
    language = serializers.ChoiceField(choices=settings.LANGUAGES)


class PreferenceViewSet(viewsets.ViewSet):
    """How you hear of each event: by mail, in the site, both or not at all."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = PreferenceSerializer
    lookup_field = "kind"
    lookup_value_regex = r"[a-z0-9_.]+"

    def _rows(self, request):
        return [{"kind": k, "label": lbl, "channel": c} for k, lbl, c in table(request.user)]

    def list(self, request):
        return Response(PreferenceSerializer(self._rows(request), many=True).data)

    def update(self, request, kind=None):
        if kind not in EVENTS:
            raise NotFound(
                gettext("No event %(kind)s: one of %(kinds)s.")
                % {"kind": repr(kind), "kinds": ", ".join(EVENTS)}
            )
        serializer = PreferenceSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        choose(request.user, kind, serializer.validated_data["channel"])
        row = next(r for r in self._rows(request) if r["kind"] == kind)
        return Response(PreferenceSerializer(row).data)

    partial_update = update

    @extend_schema(request=LanguageSerializer, responses=LanguageSerializer)
    @action(detail=False, methods=["get", "put"])
    def language(self, request):
        """The language your notifications and mails are written in; PUT to choose it."""
        if request.method == "PUT":
            serializer = LanguageSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            choose_language(request.user, serializer.validated_data["language"])
        return Response({"language": languages([request.user.pk])[request.user.pk]})


class DeliverySerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookDelivery
        fields = [
            "kind",
            "key",
            "state",
            "attempts",
            "last_status",
            "last_answer",
            "created_at",
            "delivered_at",
        ]


class WebhookSerializer(serializers.ModelSerializer):
    organisation = serializers.SlugRelatedField(
        slug_field="slug", queryset=Organisation.objects.all()
    )
    secret = serializers.CharField(
        write_only=True, min_length=16, max_length=200, help_text="Signs each body (HMAC-SHA256)."
    )
    url = serializers.URLField(max_length=500)

    class Meta:
        model = Webhook
        fields = ["id", "organisation", "url", "secret", "active", "created_at"]

    def validate_organisation(self, organisation):
        who = policy.viewer(self.context["request"].user)
        if not policy.may_manage_webhooks(who, organisation):
            raise serializers.ValidationError(
                gettext("Only the organisation's admins set its webhooks.")
            )
        return organisation

    def validate(self, attrs):
        """The URL's host resolved and checked (webhooks.address), once the rest is valid: only an
        organisation's admins make the portal look a name up."""
        try:
            webhooks.address(attrs["url"])
        except webhooks.Refused as refused:
            raise serializers.ValidationError({"url": str(refused)}) from None
        return attrs


class WebhookViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Your organisations' webhooks (their admins'): each event about the organisation's submissions and
    objections POSTed as JSON, signed `X-Portal-Signature: sha256=HMAC-SHA256(secret, body)`;
    GET .../{id}/deliveries/ is the delivery log, newest first."""

    serializer_class = WebhookSerializer
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Webhook.objects.none()
        return Webhook.objects.filter(policy.webhook_filter(policy.viewer(self.request.user)))

    @action(detail=True, methods=["get"])
    def deliveries(self, request, pk=None):
        rows = self.get_object().deliveries.all()[:50]
        return Response(DeliverySerializer(rows, many=True).data)


ROUTES = [
    ("notifications", NotificationViewSet, "notification"),
    ("notification-preferences", PreferenceViewSet, "notification-preference"),
    ("webhooks", WebhookViewSet, "webhook"),
]
