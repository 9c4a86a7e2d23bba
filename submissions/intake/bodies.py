"""Reading a large request body in blocks, for the chunks of an upload: `reader(request, length)` gives a
`readinto(view)` that fills the start of a buffer and says how many bytes it put there (0 at the end of the
body, or when the client went away).

Under gunicorn the body is read from the connection's socket into one reused buffer: gunicorn's own reader
copies each block five or six times on its way (recv, BytesIO, getvalue, slices), which held an upload to
110-160 MB/s on loopback where the socket gave 700-900 MB/s (bench/upload.py). What gunicorn read ahead with
the headers is taken first; gunicorn is then told that the body is consumed. Elsewhere (Django's test client,
runserver, another server) the body is read through wsgi.input as usual.

A part refused, or cut short by an error, is read to its end (`discard`), since gunicorn was told the body
is consumed.

Kept because issue 27's upload target is missed without it: 2 GB through the chunked API at 0.75x or more of
the throughput of bench/upload.py's reference sink. Measured 2026-11-28 on the shared 2-core machine
(bench/upload.py, 2 GB in chunks of 64 MiB, 2 rounds, each ratio to the sink of the same run): 1.42x and 1.05x
with this reader; 0.43x with wsgi.input read through Django (gunicorn's reader: 6.3 s of the web processes'
CPU per upload against 2.7-2.9 s), 0.41x without it nor the saved sha256 state.
"""


def reader(request, length: int):
    return _from_gunicorn_socket(request.META, length) or _from_stream(request)


def _from_stream(request):
    def readinto(view: memoryview) -> int:
        data = request.read(len(view))
        view[: len(data)] = data
        return len(data)

    return readinto


def _from_gunicorn_socket(environ, length: int):
    sock = environ.get("gunicorn.socket")
    body = environ.get("wsgi.input")
    source = getattr(body, "reader", None)
    unreader = getattr(source, "unreader", None)
    if (
        sock is None
        or type(source).__name__ != "LengthReader"
        or not hasattr(unreader, "take_buffered")
        or getattr(source, "length", None) != length
        or body.buf.tell()  # gunicorn's Body holds bytes already: it was read from
    ):
        return None
    ahead = unreader.take_buffered()
    if len(ahead) > length:  # the next request's first bytes: gunicorn keeps them
        unreader.unread(ahead[length:])
        ahead = ahead[:length]
    source.length = 0  # read here: gunicorn must not read it again after the response
    pending = memoryview(ahead)
    left = length

    def readinto(view: memoryview) -> int:
        nonlocal pending, left
        n = min(len(view), left)
        if n <= 0:
            return 0
        if pending:
            part, pending = pending[:n], pending[n:]
            view[: len(part)] = part
            got = len(part)
        else:
            try:
                got = sock.recv_into(view, n)
            except OSError:  # reset, or gunicorn's timeout: what arrived so far is kept
                got = 0
        left -= got
        return got

    return readinto


def discard(readinto, block: int = 1 << 20) -> None:
    """Read what is left of a body and drop it: for a part refused before (or while) it was read. Under
    gunicorn the reader took the body from gunicorn, and on a kept-alive connection (threaded workers) the
    bytes left unread would be parsed as the next request's head."""
    buffer = memoryview(bytearray(block))
    while readinto(buffer):
        pass
