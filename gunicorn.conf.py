"""gunicorn's settings for the portal, read by `gunicorn portal.wsgi` started in this folder (the README's
deployment, tests/server.py and the benchmarks alike); the command line's options win over these.

Threaded workers (gthread): a connection waits for its request in the worker's poller, not in a process
of its own. With gunicorn's sync workers each process read one request head until its 120 s timeout, so
two clients that open a connection and send half a request held both processes of a two-process site
for two minutes. A gthread worker waits up to 5 s for a new connection's first bytes in a thread, then
hands the connection back to its poller; but a client that sends half a head and stalls holds one thread
of `threads` for as long as it likes, and 16 of them stopped a site of 2 x 8 threads. So gunicorn listens
on loopback (127.0.0.1:8000, its default) behind Debian's nginx (deploy/nginx.conf), which passes it only
whole requests (README, Deployment; bench/slow_clients.py).
"""

import os

worker_class = "gthread"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("WEB_THREADS", "8"))
# A request still running after this long is cut (its process restarted); uploads arrive in parts of at
# most 64 MiB, each well within it.
timeout = 60
keepalive = 5
