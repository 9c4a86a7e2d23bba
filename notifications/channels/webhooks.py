"""Webhooks: an event as signed JSON to an organisation's endpoint.

The body is the JSON payload; `X-Portal-Signature: sha256=<hex>` is HMAC-SHA256 of the body's bytes under
the webhook's secret (a receiver computes the same and compares with hmac.compare_digest);
`X-Portal-Event` names the event and `X-Portal-Delivery` the delivery (the same on a retry, so a receiver
can drop a copy). Any 2xx answer delivers it; anything else, or no answer in TIMEOUT_S, is retried with
backoff (tasks.post_webhook).

A webhook's URL is the organisation's, so the workers must not be made to ask the site's own network with
it (SSRF): `address` resolves the host and refuses loopback, private, link-local and other addresses not on
the internet, when the URL is saved and again when each delivery is posted, and `post` connects to the
address it checked (a name that resolves elsewhere a second later gains nothing) and follows no redirect.
settings.NOTIFY_WEBHOOKS_TO_INTERNAL lets the tests post to their receivers on 127.0.0.1."""

import hashlib
import hmac
import http.client
import ipaddress
import json
import socket
import ssl
import urllib.parse

from django.conf import settings
from django.utils.translation import gettext

TIMEOUT_S = 10


class Refused(ValueError):
    """A URL the portal will not post to; str() says why."""


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def address(url: str) -> str:
    """The IP address to post `url` to: its host resolved, every address it has checked. Raises Refused
    for a URL that is not http(s), a host that does not resolve, or one with an internal address."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused(gettext("a webhook's URL is http:// or https:// with a host name"))
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        found = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (OSError, ValueError) as error:
        raise Refused(
            gettext("%(host)s does not resolve (%(error)s)")
            % {"host": parts.hostname, "error": error}
        ) from None
    addresses = list(dict.fromkeys(info[4][0] for info in found))
    if not settings.NOTIFY_WEBHOOKS_TO_INTERNAL:
        for ip in addresses:
            if not ipaddress.ip_address(ip.split("%")[0]).is_global:
                raise Refused(
                    gettext(
                        "%(host)s resolves to %(ip)s, an internal address (loopback, private or "
                        "link-local): the portal posts only to the internet"
                    )
                    % {"host": parts.hostname, "ip": ip}
                )
    return addresses[0]


class _Pinned(http.client.HTTPConnection):
    """HTTP to the address that was checked, whatever the host name resolves to now."""

    def __init__(self, host, port, ip, timeout):
        super().__init__(host, port, timeout=timeout)
        self.ip = ip

    def connect(self):
        self.sock = socket.create_connection((self.ip, self.port), self.timeout)


class _PinnedTLS(http.client.HTTPSConnection):
    """HTTPS to the address that was checked; the certificate is checked against the host name."""

    def __init__(self, host, port, ip, timeout):
        super().__init__(host, port, timeout=timeout)
        self.ip = ip

    def connect(self):
        sock = socket.create_connection((self.ip, self.port), self.timeout)
        self.sock = ssl.create_default_context().wrap_socket(sock, server_hostname=self.host)


def post(url: str, secret: str, kind: str, delivery: str, payload: dict) -> tuple[int, str]:
    """POST the payload; (HTTP status, the answer's first 500 characters). A connection that fails
    answers status 0 and the reason; a URL refused (`address`) raises Refused."""
    ip = address(url)
    parts = urllib.parse.urlsplit(url)
    body = json.dumps(payload, sort_keys=True).encode()
    kind_of = _PinnedTLS if parts.scheme == "https" else _Pinned
    connection = kind_of(parts.hostname, parts.port, ip, TIMEOUT_S)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request(
            "POST",
            path,
            body=body,
            headers={
                "Content-Type": "application/json",
                "User-Agent": "results-portal-webhook",
                "X-Portal-Event": kind,
                "X-Portal-Delivery": delivery,
                "X-Portal-Signature": signature(secret, body),
            },
        )
        answer = connection.getresponse()
        return answer.status, answer.read(500).decode(errors="replace")
    except (OSError, http.client.HTTPException) as error:
        return 0, str(error)[:500] or error.__class__.__name__
    finally:
        connection.close()
