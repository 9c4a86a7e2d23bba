"""What submissions/intake/bodies.py relies on inside gunicorn: a request body of known length is a
LengthReader over an unreader that can hand over what it read ahead, and the request's socket is in the
environ. Should gunicorn change these, bodies.py would fall back to wsgi.input without a word, and the
upload target its docstring measures would be missed: this test fails first."""

import socket
import threading

import pytest
from gunicorn.config import Config
from gunicorn.http import wsgi
from gunicorn.http.parser import RequestParser

from submissions.intake import bodies


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


def test_a_body_under_gunicorn_is_read_from_its_socket_and_the_next_request_is_left_to_gunicorn():
    client, server = socket.socketpair()
    server.settimeout(10)
    body = bytes(range(256)) * 1200  # more than gunicorn reads ahead with the head
    sent = (
        b"PATCH /u HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n" % len(body)
        + body
        + b"GET /next HTTP/1.1\r\nHost: h\r\n\r\n"
    )
    threading.Thread(target=client.sendall, args=(sent,), daemon=True).start()
    cfg = Config()
    parser = RequestParser(cfg, server, ("127.0.0.1", 1))
    request = next(parser)
    _, environ = wsgi.create(request, server, ("127.0.0.1", 1), ("127.0.0.1", 2), cfg)

    readinto = bodies._from_gunicorn_socket(environ, len(body))
    assert readinto is not None  # gunicorn's reader was recognised
    buffer, got = memoryview(bytearray(1 << 16)), bytearray()
    while n := readinto(buffer):
        got += buffer[:n]
    assert bytes(got) == body
    assert next(parser).path == "/next"  # what followed the body is gunicorn's to parse
    client.close()
    server.close()
