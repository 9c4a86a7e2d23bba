"""The OpenAPI schema's parts that drf-spectacular cannot see: the answers every operation may give
besides its own, and the API token as a security scheme.

DRF answers a bad filter or body with 400, missing or wrong credentials with 401, a refusal with
403, anything unknown or not visible with 404 (never 403, so nothing hidden is confirmed), and a
throttled client with 429, each with a JSON object (`{"detail": ...}`, or the fields in error).
Listing them lets clients, and schemathesis in tests/portal/test_schema.py, hold every answer to the schema.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema as BaseAutoSchema

ERRORS = {
    "400": "The query or the body is not valid: `detail`, or each field in error with its messages.",
    "401": "Credentials are missing or wrong (an unknown or revoked token).",
    "403": "Signed in, but not allowed to do this.",
    "404": "No such item, or not one that you may see.",
    "429": "Too many requests: `detail` says when to try again (also in Retry-After).",
}
ERROR_BODY = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": True,
}


class AutoSchema(BaseAutoSchema):
    def get_operation(self, *args, **kwargs):
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        responses = operation.setdefault("responses", {})
        # An error is written by the renderer the request chose (?format=csv gives a CSV error).
        content = {t: {"schema": ERROR_BODY} for t in self.map_renderers("media_type")}
        for code, description in ERRORS.items():
            responses.setdefault(code, {"description": description, "content": content})
        return operation


class TokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.TokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <key>`, with a key made on your account page (or by POST "
            "/api/v1/tokens/). It is shown once, when it is made.",
        }
