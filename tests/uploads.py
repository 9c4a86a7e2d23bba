"""The chunked upload API (/api/v1/uploads/) as the tests drive it through Django's test client: a
token's header (token_for), an upload started, a part sent, completed (start, send, complete), or all
of it at once (upload_whole); and the files left under a folder (files_under)."""

import hashlib
from pathlib import Path

from accounts.models import ApiToken

UPLOADS = "/api/v1/uploads/"
OCTETS = "application/offset+octet-stream"


def files_under(folder) -> list[Path]:
    return sorted(p for p in Path(folder).rglob("*") if p.is_file())


def token_for(user) -> dict:
    return {"HTTP_AUTHORIZATION": f"Token {ApiToken.create(user, 'test')[1]}"}


def start(client, auth, data: bytes, name="acme.tgz", **extra):
    return client.post(
        UPLOADS,
        {"round": "training-v5.1", "name": name, "size": len(data), **extra},
        content_type="application/json",
        **auth,
    )


def send(client, auth, uid, offset: int, part: bytes):
    return client.patch(
        f"{UPLOADS}{uid}/", part, content_type=OCTETS, HTTP_UPLOAD_OFFSET=str(offset), **auth
    )


def complete(client, auth, uid, sha256=""):
    return client.post(
        f"{UPLOADS}{uid}/complete/", {"sha256": sha256}, content_type="application/json", **auth
    )


def upload_whole(client, auth, data: bytes, parts=3, **extra):
    uid = start(client, auth, data, **extra).json()["uid"]
    step = -(-len(data) // parts)
    for offset in range(0, len(data), step):
        assert send(client, auth, uid, offset, data[offset : offset + step]).status_code == 204
    return complete(client, auth, uid, hashlib.sha256(data).hexdigest())
