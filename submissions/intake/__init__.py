"""Taking a bundle in: the room a submission starts in.

Owns: the upload form (forms.py) and chunked, resumable uploads (uploads.py, spoken by the API in
submissions/api.py, the upload page's script and portal-submit); reading a large request body in
blocks (bodies.py); streaming a whole
bundle to storage and committing its Submission before ingest is queued (submit.py); the receipt
(receipts.py); dropping abandoned uploads (tasks.py).

May import: review (whether a fix was asked for), checking (its tasks, to queue ingest; bundle
limits), refchecks, the records (models, storage) and the domain; leaderboard, accounts, audit.
Never the app's root (pages, API). See docs/architecture.md.
"""
