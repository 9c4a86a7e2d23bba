"""API tokens through the API: a user lists, makes and revokes their own (routed by portal.api.router)."""

from rest_framework import mixins, permissions, serializers, viewsets

from .models import ApiToken
from .tokens import issue, revoke


class TokenSerializer(serializers.ModelSerializer):
    key = serializers.SerializerMethodField(
        help_text="The key, in the answer to its creation only: it is not stored and never shown again."
    )

    class Meta:
        model = ApiToken
        fields = ["uid", "name", "prefix", "created_at", "last_used_at", "revoked_at", "key"]
        read_only_fields = ["uid", "prefix", "created_at", "last_used_at", "revoked_at"]

    def get_key(self, token) -> str | None:
        return getattr(token, "key", None)

    def create(self, validated_data):
        token, key = issue(self.context["request"].user, validated_data["name"])
        token.key = key
        return token


class TokenViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Your API tokens. DELETE revokes one (it stays listed, revoked)."""

    serializer_class = TokenSerializer
    permission_classes = [permissions.IsAuthenticated]
    lookup_field = "uid"

    lookup_value_converter = (
        "uuid"  # a typed path parameter in the schema, and no query for a non-uuid
    )

    def get_queryset(self):
        if getattr(
            self, "swagger_fake_view", False
        ):  # drf-spectacular building the schema: no user
            return ApiToken.objects.none()
        return ApiToken.objects.filter(user=self.request.user)

    def perform_destroy(self, token):
        revoke(token, self.request.user)


ROUTES = [("tokens", TokenViewSet, "token")]
