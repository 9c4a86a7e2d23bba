"""Whether a service (PostgreSQL, Redis) answers at a URL: shared by the test runner and the benches."""

import socket
from urllib.parse import urlparse


def answers(url: str) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname, parsed.port), timeout=2):
            return True
    except OSError:
        return False
