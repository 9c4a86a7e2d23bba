"""Taking a bundle in: the upload form and chunked uploads, the request bodies they read, the bundle's
storage, its receipt, and the Submission row committed before ingest is queued."""
