"""Screenshots of the public pages at a desktop's and a phone's width, for looking at a change.

    python bench/screenshots.py http://127.0.0.1:8000 [--only log,compare] [--out artifacts/screenshots]

Runs Debian's headless Chromium (CHROMIUM, CHROMEDRIVER as in tests/browser) against a running site that has
the shared rounds loaded (`make run`), and writes <page>-<width>x<height>.png for each page at 1400×900 and
390×844, each as tall as its content (up to 6,000 px), and <page>-<width>x<height>-top.png, its first screen. Not part of the tests: the browser tests take the same
pages' screenshots on their own catalogue (tests/browser/test_reading_browser.py).
"""

import argparse
import os
import sys
import time
from pathlib import Path

SYSTEM = "/r/training-v5.1/Dell/1xXE9680Lx8H200-SXM-141GB/"
PAGES = {
    "home": "/",
    "round": "/r/training-v5.1/",
    "round-filtered": "/r/training-v5.1/?accelerator=family%3ANVIDIA+B200&accelerator=family%3AAMD+MI355X&sort=llama2_70b_lora",
    "round-v0.5": "/r/training-v0.5/",
    "system": SYSTEM,
    "result": SYSTEM + "rgat/",
    "log": SYSTEM + "rgat/log/0/?q=run_stop",
    "log-records": SYSTEM + "rgat/log/0/?line=691#L691",
    "compare": "/r/training-v5.1/compare/?s=Dell/1xXE9680Lx8H200-SXM-141GB&s=Dell/1xXE9680Lx8B200-SXM-180GB",
    "progress": "/progress/",
    "api-docs": "/api/docs/",
}
SIZES = [(1400, 900), (390, 844)]


def driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(service=service, options=options)


def charts_drawn(d, timeout: float = 20) -> None:
    """Scroll each chart into view (they are drawn when seen) and wait until plotly has drawn them."""
    end = time.monotonic() + timeout
    for chart in d.find_elements("css selector", "div.chart"):
        d.execute_script("arguments[0].scrollIntoView()", chart)
        while not chart.find_elements("css selector", ".main-svg") and time.monotonic() < end:
            time.sleep(0.1)


def shoot(d, url: str, path: Path, width: int, height: int) -> None:
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    d.get(url)
    charts_drawn(d)
    end = time.monotonic() + 20
    while (
        "Loading ..." in d.execute_script("return document.body.innerText")
        and time.monotonic() < end
    ):
        time.sleep(0.2)  # the API docs: Redoc draws the schema after the page has loaded
    # The first screen alone, as a reader sees it (at the line an address's #fragment points to).
    if "#" not in url:
        d.execute_script("window.scrollTo(0, 0)")
    d.save_screenshot(str(path.with_name(path.stem + "-top.png")))
    full = 0
    for _ in range(
        4
    ):  # sections laid out lazily (content-visibility) grow once on screen: measure again
        now = d.execute_script("return Math.min(document.documentElement.scrollHeight, 6000)")
        if now == full:
            break
        full = now
        d.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride", {**metrics, "height": max(full, height)}
        )
    d.execute_script("window.scrollTo(0, 0)")
    d.save_screenshot(str(path))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the running site, e.g. http://127.0.0.1:8000")
    parser.add_argument(
        "--only", default="", help="comma-separated page names: " + ", ".join(PAGES)
    )
    parser.add_argument("--out", type=Path, default=Path("artifacts/screenshots"))
    args = parser.parse_args()
    only = [name for name in args.only.split(",") if name]
    unknown = [name for name in only if name not in PAGES]
    if unknown:
        parser.error(f"unknown pages: {', '.join(unknown)}")
    args.out.mkdir(parents=True, exist_ok=True)
    d = driver()
    try:
        for name, path in PAGES.items():
            if only and name not in only:
                continue
            for width, height in SIZES:
                target = args.out / f"{name}-{width}x{height}.png"
                shoot(d, args.url.rstrip("/") + path, target, width, height)
                print(target)
    finally:
        d.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
