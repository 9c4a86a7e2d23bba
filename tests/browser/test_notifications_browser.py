"""A member's notifications and preferences in the browser: the unread count in the header, the list, and
axe-core finding no serious or critical violation on either page, at desktop and phone widths."""

import pytest
from selenium.webdriver.common.by import By

from .pages import DESKTOP, PHONE, axe_violations, open_page, wait

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]


def test_the_notification_pages_read_well_and_pass_axe(
    live_server, browser, django_db_blocker, cast
):
    from notifications.models import Notification

    user = cast["member_a"]
    with django_db_blocker.unblock():
        # The cast is shared: tests before this one may have told member_a of their own uploads.
        unread = Notification.objects.filter(recipient=user, in_site=True, read_at=None).count()
        for n in range(2):
            Notification.objects.create(
                key=f"validation.finished:browser={n}",
                kind="validation.finished",
                recipient=user,
                title=f"Invalid, 3 errors: bundle-{n}.tgz for Training v5.1",
                text="The portal checked bundle.tgz: 3 errors and 1 warning.",
                url="/submissions/",
            )
    d = browser
    open_page(d, f"{live_server.url}/accounts/login/?next=/notifications/")
    d.find_element(By.ID, "id_username").send_keys(user.username)
    d.find_element(By.ID, "id_password").send_keys("pw")
    d.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    wait(d, lambda d: "/accounts/login/" not in d.current_url)
    found = {}
    try:
        assert f"Notifications {unread + 2} unread" in d.find_element(
            By.ID, "notifications-link"
        ).get_attribute("textContent").replace("\n", " ")
        for width, height in (DESKTOP, PHONE):
            d.execute_cdp_cmd(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
            )
            for path in ("/notifications/", "/notifications/preferences/"):
                open_page(d, live_server.url + path)
                violations = axe_violations(d)
                if violations:
                    found[f"{path} at {width}"] = violations
    finally:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        d.delete_all_cookies()
        with django_db_blocker.unblock():
            Notification.objects.filter(recipient=user).delete()
    assert not found, found
