#!/usr/bin/env python
"""The reference sink for bench/upload.py: the least a server can do with the chunks of an upload.

One process on a raw socket, one connection at a time: it reads a request's head, then its body in
blocks into one buffer, updates one hashlib sha256 with each block, writes it at the chunk's offset
and fsyncs the file before it answers 204 with the new Upload-Offset, as the portal does. A GET
answers the sha256 of everything received. No framework, no database, no authentication.

    bench/upload_sink.py PORT FILE
"""

import hashlib
import os
import socket
import sys

BLOCK = 1 << 20


def serve(port: int, path: str) -> None:
    digest = hashlib.sha256()
    buffer = memoryview(bytearray(BLOCK))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with socket.create_server(("127.0.0.1", port)) as server:
        while True:
            conn, _ = server.accept()
            with conn:
                head = b""
                while b"\r\n\r\n" not in head and (got := conn.recv(65536)):
                    head += got
                if b"\r\n\r\n" not in head:  # a connection that only looked whether we listen
                    continue
                head, _, body = head.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {
                    k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])
                }
                if lines[0].startswith("GET"):
                    answer = digest.hexdigest().encode()
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n" + answer)
                    continue
                offset = int(headers["upload-offset"])
                left = int(headers["content-length"]) - len(body)
                digest.update(body)
                offset += os.pwrite(fd, body, offset)
                while left:
                    got = conn.recv_into(buffer, min(BLOCK, left))
                    if not got:
                        break
                    digest.update(buffer[:got])
                    offset += os.pwrite(fd, buffer[:got], offset)
                    left -= got
                os.fsync(fd)
                conn.sendall(f"HTTP/1.1 204 No Content\r\nUpload-Offset: {offset}\r\n\r\n".encode())


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2])
