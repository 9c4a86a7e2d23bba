"""Bundles in an S3-compatible bucket: django-storages' S3 storage, set for bundles (settings.s3_storage names it
where S3_BUCKET is set). Its memory stays bounded whatever a bundle's size, and an object is the bundle's bytes.
"""

from boto3.s3.transfer import TransferConfig
from storages.backends.s3 import S3Storage
from storages.utils import clean_name

MiB = 1024 * 1024
# Past this a bundle goes in parts of this size (past 10,000 parts, S3's most, s3transfer makes them larger).
PART_BYTES = 8 * MiB
PARTS_AT_ONCE = 4


def transfer_config() -> TransferConfig:
    config = TransferConfig(
        multipart_threshold=PART_BYTES,
        multipart_chunksize=PART_BYTES,
        max_concurrency=PARTS_AT_ONCE,
        # A download's writes waiting (of io_chunksize, 256 KiB): a part's worth.
        max_io_queue=PART_BYTES // (256 * 1024),
    )
    # Of a file object (not a path) s3transfer reads each part into memory, by default ten ahead.
    config.max_in_memory_upload_chunks = PARTS_AT_ONCE
    return config


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
            "transfer_config": transfer_config(),
            # A file opened for reading spools to disk past this, not the whole object in memory.
            "max_memory_size": PART_BYTES,
        }

    def _save(self, name, content):
        """A file on disk (with temporary_file_path(), as Django's temporary uploads and storage.put()'s) is
        sent from its path: s3transfer then reads each part from the file as it sends it, where of a file
        object it reads the parts into memory first (a 192 MiB bundle: 12 MiB held instead of 60 MiB)."""
        if not hasattr(content, "temporary_file_path"):
            return super()._save(name, content)
        cleaned = clean_name(name)
        key = self._normalize_name(cleaned)
        self.bucket.Object(key).upload_file(
            content.temporary_file_path(),
            ExtraArgs=self._get_write_parameters(key, content),
            Config=self.transfer_config,
        )
        return cleaned
