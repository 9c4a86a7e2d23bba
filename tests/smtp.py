"""A real SMTP server on loopback for the tests of mail (notifications/, accounts' password reset): it takes
every message and keeps its bytes; `stop()` closes it (the port refuses connections: a server that is down)
and `start()` opens it again on the same port; `reply_delay_s` makes it answer each command that late, as a
distant server does."""

import email
import email.policy
import socketserver
import threading
import time


class _Session(socketserver.StreamRequestHandler):
    def reply(self, line: str) -> None:
        time.sleep(self.server.reply_delay_s)
        self.wfile.write(line.encode() + b"\r\n")

    def handle(self):
        self.reply("220 loopback ESMTP")
        while line := self.rfile.readline():
            command = line[:4].upper()
            if command == b"DATA":
                self.reply("354 go on")
                body = []
                while (part := self.rfile.readline()) not in (b".\r\n", b""):
                    body.append(part[1:] if part.startswith(b"..") else part)
                with self.server.lock:
                    self.server.messages.append(b"".join(body))
                self.reply("250 queued")
            elif command == b"QUIT":
                self.reply("221 bye")
                return
            else:  # EHLO, HELO, MAIL, RCPT, RSET, NOOP
                self.reply("250 loopback")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class SMTPServer:
    def __init__(self, port: int = 0, reply_delay_s: float = 0.0):
        self.messages: list[bytes] = []
        self.lock = threading.Lock()
        self.port = port
        self.reply_delay_s = reply_delay_s
        self.start()

    def start(self) -> None:
        self._server = _Server(("127.0.0.1", self.port), _Session)
        self._server.messages, self._server.lock = self.messages, self.lock
        self._server.reply_delay_s = self.reply_delay_s
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def parsed(self) -> list[email.message.EmailMessage]:
        with self.lock:
            return [email.message_from_bytes(m, policy=email.policy.default) for m in self.messages]
