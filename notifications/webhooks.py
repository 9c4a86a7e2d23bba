"""Webhooks: an event as signed JSON to an organisation's endpoint.

The body is the JSON payload; `X-Portal-Signature: sha256=<hex>` is HMAC-SHA256 of the body's bytes under
the webhook's secret (a receiver computes the same and compares with hmac.compare_digest);
`X-Portal-Event` names the event and `X-Portal-Delivery` the delivery (the same on a retry, so a receiver
can drop a copy). Any 2xx answer delivers it; anything else, or no answer in TIMEOUT_S, is retried with
backoff (tasks.post_webhook)."""

import hashlib
import hmac
import json
import urllib.error
import urllib.request

TIMEOUT_S = 10


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def post(url: str, secret: str, kind: str, delivery: str, payload: dict) -> tuple[int, str]:
    """POST the payload; (HTTP status, the answer's first 500 characters). A connection that fails
    answers status 0 and the reason."""
    body = json.dumps(payload, sort_keys=True).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "results-portal-webhook",
            "X-Portal-Event": kind,
            "X-Portal-Delivery": delivery,
            "X-Portal-Signature": signature(secret, body),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            return answer.status, answer.read(500).decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read(500).decode(errors="replace")
    except (urllib.error.URLError, OSError) as error:
        return 0, str(getattr(error, "reason", error))[:500]
