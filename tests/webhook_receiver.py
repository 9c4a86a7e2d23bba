"""A webhook receiver on loopback for the tests of notifications' webhooks, as a submitter's CI would run
one: it checks each body's signature (HMAC-SHA256 under SECRET), answers 500 to the first `fail` POSTs
that check out and 200 after, and keeps the events it took and every status it answered."""

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = "a-secret-of-the-ci-0123456789"


class Receiver(ThreadingHTTPServer):
    """Answers `fail` 500s, then 200 to each POST; keeps the events whose signature checks out."""

    def __init__(self, fail=2):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fail, self.answers, self.events, self.bad = fail, [], [], 0
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/hook"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        server = self.server
        if not hmac.compare_digest(expected, self.headers["X-Portal-Signature"]):
            server.bad += 1
            status = 401
        elif server.fail > 0:
            server.fail -= 1
            status = 500
        else:
            server.events.append((self.headers["X-Portal-Event"], json.loads(body)))
            status = 200
        server.answers.append(status)
        self.send_response(status)
        self.end_headers()
        self.wfile.write(b"ok" if status == 200 else b"try later")
