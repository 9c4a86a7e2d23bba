"""Bundles in an S3-compatible bucket: django-storages' S3 storage, set for bundles (settings.s3_storage names it
where S3_BUCKET is set). An object is the bundle's bytes, private to the portal.
"""

from storages.backends.s3 import S3Storage


class S3BundleStorage(S3Storage):
    def get_default_settings(self):
        return {
            **super().get_default_settings(),
            "default_acl": None,  # private: bundles are read by the portal only
            "querystring_auth": True,
            "file_overwrite": True,  # a bundle's name is its sha256: the same name is the same bytes
            # Opaque bytes. Guessed from the name, acme.tgz would be a tar with Content-Encoding gzip, which
            # HTTP clients undo on the way: what they saved would not be the bundle.
            "object_parameters": {"ContentType": "application/octet-stream"},
        }
