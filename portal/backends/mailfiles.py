"""The embedded mail backend (no EMAIL_URL): each message written as an .eml file under EMAIL_FILE_PATH,
one line logged per message. A backend through Django's documented interface (BaseEmailBackend); its
own file backend writes every message of a connection into one .log file, which no mail program opens."""

import logging
import uuid
from pathlib import Path

from django.conf import settings
from django.core.mail.backends.base import BaseEmailBackend
from django.utils import timezone

log = logging.getLogger(__name__)


class EmlFileBackend(BaseEmailBackend):
    def send_messages(self, email_messages) -> int:
        folder = Path(settings.EMAIL_FILE_PATH)
        folder.mkdir(parents=True, exist_ok=True)
        sent = 0
        for message in email_messages:
            name = f"{timezone.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:12]}.eml"
            path = folder / name
            path.write_bytes(message.message().as_bytes())
            log.info("mail to %s, %r: %s", ", ".join(message.recipients()), message.subject, path)
            sent += 1
        return sent
