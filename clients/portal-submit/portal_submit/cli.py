"""portal-submit: upload a bundle in resumable chunks, wait for its checking, print the report.

With --wait-webhook it waits for the organisation's webhook event (signed, checked here) rather than
polling, and still looks now and then should none come.

Speaks the portal's upload protocol (API v1 `uploads/`): create with name, size and sha256; PATCH each chunk
at the offset the portal holds (a 409 answers the right one); complete; then follow `submissions/<uid>/`.
Exit status: 0 taken (and valid, with --wait), 1 blocking findings or a bundle that could not be opened,
2 refused or unreachable.
"""

import argparse
import hashlib
import hmac
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

OK, BLOCKED, REFUSED = 0, 1, 2
FINAL = {"valid", "invalid", "failed", "published", "withdrawn"}
PASSING = {"valid", "published"}
RETRIES = 8  # transport errors in a row before giving up
MAX_WAIT_S = 300  # the longest pause a Retry-After may ask for
TIMEOUT_S = 120


class Answer:
    """An HTTP answer read by http.client, with what the rest of the client reads of requests' own."""

    def __init__(self, status: int, headers, body: bytes):
        self.status_code, self.headers, self.content = status, headers, body
        self.text = body.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.content)


class Refused(Exception):
    """The portal said no (or could not be reached); str(e) says why."""


def sha256_of(path: Path, block: int = 4 * 1024 * 1024) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while data := f.read(block):
            digest.update(data)
    return digest.hexdigest()


def _detail(response) -> str:
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}: {response.text[:300]}"
    if isinstance(body, dict) and "detail" in body:
        return f"HTTP {response.status_code}: {body['detail']}"
    return f"HTTP {response.status_code}: {json.dumps(body)[:500]}"


def backoff(attempt: int) -> float:
    """Seconds to wait after the `attempt`-th failure in a row (from 0): 0.5, 1, 2 ... at most 15."""
    return min(2**attempt * 0.5, 15)


def passing(response) -> bool:
    """An answer that may change if asked again later: the portal's trouble (5xx) or its rate (429)."""
    return response.status_code >= 500 or response.status_code == 429


def wait_asked(response, attempt: int) -> float:
    """The portal's Retry-After in seconds (at most MAX_WAIT_S), else the backoff."""
    try:
        return min(max(float(response.headers.get("Retry-After", "")), 0.0), MAX_WAIT_S)
    except ValueError:
        return backoff(attempt)


class Portal:
    def __init__(self, url: str, token: str, out=sys.stdout):
        self.api = url.rstrip("/") + "/api/v1/"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"
        self.out = out

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def pause(self, why: str, seconds: float) -> None:
        """Wait before trying again, saying why, how long and until when."""
        until = time.strftime("%H:%M:%S", time.localtime(time.time() + seconds))
        self.say(f"{why.rstrip('.')}; waiting {seconds:.0f} s, until {until}, before trying again")
        time.sleep(seconds)

    def call(self, method: str, url: str, *, ok=(200,), **kwargs) -> requests.Response:
        """One request, tried again after a transport error, a 5xx or a 429 (RETRIES, with growing
        pauses, or as long as the portal's Retry-After asks)."""
        for attempt in range(RETRIES):
            try:
                response = self.session.request(method, url, timeout=TIMEOUT_S, **kwargs)
            except requests.RequestException as error:
                if attempt == RETRIES - 1:
                    raise Refused(f"the portal could not be reached: {error}") from None
                self.pause(f"the portal could not be reached ({error})", backoff(attempt))
                continue
            if response.status_code in ok:
                return response
            if passing(response) and attempt < RETRIES - 1:
                self.pause(_detail(response), wait_asked(response, attempt))
                continue
            raise Refused(_detail(response))
        raise AssertionError("unreachable")

    # Uploading

    def start(self, round_key: str, path: Path, size: int, sha: str, organisation=None) -> dict:
        given = {"round": round_key, "name": path.name, "size": size, "sha256": sha}
        if organisation:
            given["organisation"] = organisation
        return self.call("POST", self.api + "uploads/", ok=(201,), json=given).json()

    def offset_of(self, uid: str) -> int | None:
        """The offset the portal holds for an upload, None if it knows no such open upload."""
        try:
            response = self.call("HEAD", f"{self.api}uploads/{uid}/", ok=(200, 404))
        except Refused:
            return None
        if response.status_code == 404:
            return None
        return int(response.headers["Upload-Offset"])

    def send(self, uid: str, path: Path, size: int, offset: int, chunk: int) -> None:
        """Send the bytes from `offset` on, chunk by chunk; a chunk cut off is sent again from the offset
        the portal answers."""
        url = f"{self.api}uploads/{uid}/"
        failures = 0
        last_report = 0.0
        with open(path, "rb") as f:
            while offset < size:
                try:
                    response = self._patch(url, f, offset, min(chunk, size - offset))
                except (OSError, http.client.HTTPException) as error:
                    failures += 1
                    if failures >= RETRIES:
                        raise Refused(f"the upload kept failing: {error}") from None
                    self.pause(
                        f"connection lost at byte {offset:,} ({error.__class__.__name__})",
                        backoff(failures - 1),
                    )
                    held = self.offset_of(uid)
                    if held is None:
                        raise Refused("the portal no longer knows this upload") from None
                    offset = held
                    self.say(f"resuming at byte {offset:,}")
                    continue
                if response.status_code == 409 and "Upload-Offset" in response.headers:
                    offset = int(response.headers["Upload-Offset"])  # the portal holds more or less
                    continue
                if passing(response) and failures < RETRIES - 1:
                    failures += 1
                    why = (
                        f"the portal did not take the part at byte {offset:,}: {_detail(response)}"
                    )
                    self.pause(why, wait_asked(response, failures - 1))
                    held = self.offset_of(uid)
                    offset = held if held is not None else offset
                    continue
                if response.status_code != 204:
                    raise Refused(_detail(response))
                failures = 0
                offset = int(response.headers["Upload-Offset"])
                if time.monotonic() - last_report > 5 or offset == size:
                    last_report = time.monotonic()
                    self.say(f"sent {offset:,} of {size:,} bytes ({100 * offset / size:.0f}%)")

    def _patch(self, url: str, f, offset: int, count: int) -> "Answer":
        """PATCH `count` bytes of the file from `offset`, sent by sendfile() from the page cache (requests
        would read each chunk into memory and copy it twice more on its way out)."""
        parts = urllib.parse.urlsplit(url)
        kind = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        connection = kind(parts.hostname, parts.port, timeout=TIMEOUT_S)
        try:
            connection.putrequest("PATCH", parts.path, skip_accept_encoding=True)
            for name, value in {
                "Authorization": self.session.headers["Authorization"],
                "Upload-Offset": str(offset),
                "Content-Type": "application/offset+octet-stream",
                "Content-Length": str(count),
                "User-Agent": "portal-submit",
            }.items():
                connection.putheader(name, value)
            connection.endheaders()
            connection.sock.sendfile(f, offset, count)
            response = connection.getresponse()
            return Answer(response.status, response.headers, response.read())
        finally:
            connection.close()

    def complete(self, uid: str, sha: str) -> dict:
        response = self.call(
            "POST", f"{self.api}uploads/{uid}/complete/", ok=(200, 201), json={"sha256": sha}
        )
        submission = response.json()
        submission["_created"] = response.status_code == 201
        return submission

    # Following

    def submission(self, uid: str) -> dict:
        return self.call("GET", f"{self.api}submissions/{uid}/").json()

    def findings(self, uid: str) -> dict:
        return self.call("GET", f"{self.api}submissions/{uid}/findings/").json()

    def wait(self, uid: str, poll_s: float, timeout_s: float, listener=None) -> dict:
        """Look at the submission until it is final: every `poll_s` seconds, or with a webhook `listener`
        as soon as the portal's event about it arrives (and every `poll_s` still, should none come)."""
        deadline = time.monotonic() + timeout_s
        seen = None
        while True:
            submission = self.submission(uid)
            steps = [(s["label"], s["state"], s["detail"]) for s in submission["steps"]]
            if steps != seen:
                seen = steps
                self.say(
                    "  ".join(f"{label}: {state}" for label, state, _ in steps)
                    + "".join(
                        f"\n    {label}: {detail}"
                        for label, state, detail in steps
                        if detail and state in ("running", "waiting", "failed")
                    )
                )
            if submission["status"] in FINAL:
                return submission
            if time.monotonic() > deadline:
                raise Refused(f"still {submission['status']} after {timeout_s:.0f} s")
            if listener is None:
                time.sleep(poll_s)
                continue
            event = listener.next_about(uid, min(poll_s, max(deadline - time.monotonic(), 0.1)))
            if event is not None:
                self.say(f"the portal's webhook: {event.get('event')}: {event.get('title', '')}")


class WebhookListener(ThreadingHTTPServer):
    """The portal's webhook events, received on a local port (the organisation's webhook URL must reach
    it): a body whose X-Portal-Signature is not HMAC-SHA256 of it under the secret is answered 401 and
    dropped; a signed one is answered 200 and kept for `next_about`."""

    MAX_BODY = 1 << 20

    def __init__(self, address: tuple[str, int], secret: str):
        super().__init__(address, _WebhookHandler)
        self.secret = secret.encode()
        self.events: list[dict] = []
        self.taken = 0
        self.forged = 0
        self.arrived = threading.Condition()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def signed(self, body: bytes, signature: str) -> bool:
        expected = "sha256=" + hmac.new(self.secret, body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected.encode(), signature.encode())

    def keep(self, event: dict) -> None:
        with self.arrived:
            self.events.append(event)
            self.arrived.notify_all()

    def next_about(self, uid: str, timeout_s: float) -> dict | None:
        """The next event about submission `uid` not seen yet, waiting at most `timeout_s` for it; events
        that came before its upload was done are kept and found here too."""
        end = time.monotonic() + timeout_s
        with self.arrived:
            while True:
                for event in self.events[self.taken :]:
                    self.taken += 1
                    if event.get("about") == uid:
                        return event
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.arrived.wait(left)

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _WebhookHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _answer(self, status: int, text: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(text.encode())

    def do_POST(self):
        try:
            size = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return self._answer(411, "a length, please")
        if not 0 <= size <= WebhookListener.MAX_BODY:
            return self._answer(413, "too large")
        body = self.rfile.read(size)
        if not self.server.signed(body, self.headers.get("X-Portal-Signature", "")):
            self.server.forged += 1
            return self._answer(401, "bad signature")
        try:
            event = json.loads(body)
        except ValueError:
            return self._answer(400, "not JSON")
        if isinstance(event, dict):
            self.server.keep(event)
        return self._answer(200, "ok")


def listen(where: str, secret: str) -> WebhookListener:
    """A listener on HOST:PORT (or PORT, on every address)."""
    host, _, port = where.rpartition(":")
    return WebhookListener((host or "0.0.0.0", int(port)), secret)


def report_text(submission: dict, report: dict) -> str:
    counts = report["counts"]
    lines = [
        f"Submission {submission['uid']} ({submission['round']}): {submission['status']}",
        f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} info",
    ]
    if submission.get("message"):
        lines.append(submission["message"])
    for step in submission["steps"]:
        if step["detail"]:
            lines.append(f"{step['label']}: {step['state']}. {step['detail']}")
    for f in report["findings"]:
        where = f["file"] + (f":{f['line']}" if f["line"] else "")
        lines.append(f"{f['severity'].upper():7} {f['rule']:32} {where}")
        lines.append(f"        {f['message']}")
        if f.get("hint"):
            lines.append(f"        hint: {f['hint']}")
    lines.append(f"Details: {submission['url']}")
    return "\n".join(lines)


def state_file(state_dir: Path, url: str, round_key: str, sha: str) -> Path:
    key = hashlib.sha256(f"{url.rstrip('/')}\n{round_key}\n{sha}".encode()).hexdigest()[:32]
    return state_dir / f"{key}.json"


def upload(portal: Portal, args, path: Path) -> dict:
    size = path.stat().st_size
    portal.say(f"hashing {path.name} ({size:,} bytes)")
    sha = sha256_of(path)
    saved = state_file(Path(args.state_dir), args.url, args.round, sha)
    uid = None
    if saved.is_file():
        uid = json.loads(saved.read_text()).get("upload")
        offset = portal.offset_of(uid) if uid else None
        if offset is None:
            uid = None
        else:
            portal.say(f"resuming upload {uid} at byte {offset:,}")
    if uid is None:
        created = portal.start(args.round, path, size, sha, args.organisation)
        uid, offset = created["uid"], created["offset"]
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps({"upload": uid, "bundle": str(path.resolve())}))
        portal.say(f"upload {uid} started")
    portal.send(uid, path, size, offset, max(1, int(args.chunk_mb * 1024 * 1024)))
    submission = portal.complete(uid, sha)
    saved.unlink(missing_ok=True)
    portal.say(
        ("received" if submission["_created"] else "already received")
        + f": submission {submission['uid']}, sha256 {submission['sha256']}\n"
        f"receipt: {submission['receipt_url']}"
    )
    return submission


def _token_kept_whole(argv: list[str]) -> list[str]:
    """`--token KEY` as `--token=KEY`: a key may begin with "-", which argparse would take for an option."""
    out, words = [], iter(argv)
    for word in words:
        if word == "--token":
            key = next(words, None)
            out.append(word if key is None else f"--token={key}")
        else:
            out.append(word)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="portal-submit", description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path, help=".tar, .tar.gz, .tgz, .tar.xz or .zip")
    parser.add_argument("--url", required=True, help="the portal, e.g. https://results.example.org")
    parser.add_argument("--token", default=os.environ.get("PORTAL_TOKEN"), help="or PORTAL_TOKEN")
    parser.add_argument("--round", required=True, help="the round's key, e.g. training-v5.1")
    parser.add_argument(
        "--organisation", help="the slug of the organisation you upload for, if you have several"
    )
    parser.add_argument(
        "--wait", action="store_true", help="wait for the checking; print the report"
    )
    parser.add_argument(
        "--wait-webhook",
        metavar="[HOST:]PORT",
        help="wait as --wait, woken by the portal's webhook event received here instead of polling "
        "(your organisation's webhook URL must reach this address); still looks every --poll seconds",
    )
    parser.add_argument(
        "--webhook-secret",
        default=os.environ.get("PORTAL_WEBHOOK_SECRET"),
        help="the webhook's secret, to check each event's signature; or PORTAL_WEBHOOK_SECRET",
    )
    parser.add_argument("--chunk-mb", type=float, default=16, help="bytes per request, in MiB (16)")
    parser.add_argument(
        "--poll",
        type=float,
        help="seconds between looks (3; with --wait-webhook 60, should no event come)",
    )
    parser.add_argument(
        "--timeout", type=float, default=3600, help="longest wait in seconds (3600)"
    )
    parser.add_argument(
        "--state-dir",
        default=os.path.join(
            os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "portal-submit"
        ),
        help="where an unfinished upload's id is kept, to resume it",
    )
    args = parser.parse_args(_token_kept_whole(sys.argv[1:] if argv is None else argv))
    if not args.token:
        parser.error("give --token or set PORTAL_TOKEN")
    if not args.bundle.is_file():
        parser.error(f"{args.bundle} is not a file")
    if args.wait_webhook and not args.webhook_secret:
        parser.error("--wait-webhook needs --webhook-secret or PORTAL_WEBHOOK_SECRET")
    if args.poll is None:
        args.poll = 60.0 if args.wait_webhook else 3.0
    portal = Portal(args.url, args.token)
    listener = None
    if args.wait_webhook:  # listening before the upload: an early verdict is not missed
        try:
            listener = listen(args.wait_webhook, args.webhook_secret)
            portal.say(f"listening for the portal's webhook on {args.wait_webhook}")
        except (OSError, ValueError) as error:
            portal.say(f"cannot listen on {args.wait_webhook} ({error}); looking every 3 s instead")
            args.poll = 3.0
    try:
        submission = upload(portal, args, args.bundle)
        if not (args.wait or args.wait_webhook):
            return OK
        submission = portal.wait(submission["uid"], args.poll, args.timeout, listener)
        print(report_text(submission, portal.findings(submission["uid"])), flush=True)
    except Refused as error:
        print(f"portal-submit: refused: {error}", file=sys.stderr, flush=True)
        return REFUSED
    finally:
        if listener is not None:
            listener.close()
    return OK if submission["status"] in PASSING else BLOCKED


if __name__ == "__main__":
    sys.exit(main())
