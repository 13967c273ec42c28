"""The README's figure: a screenshot of a study page's first screen (the answer), taken in
headless Chromium (Debian's ``chromium`` and ``chromium-driver``, through Selenium).

    snakemake --cores 2                                   # the default study
    python scripts/page_screenshot.py results docs/img/study-page.png [--width 1100 --height 900]

Opens ``RESULTS/index.html`` from disk, so the page is the study's own, and writes a PNG of
the top of it; prints the page's size and the answer it shows per language.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def browser(width: int, height: int) -> webdriver.Chrome:
    """Headless Chromium of the given window size; exits with one line without one."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        sys.exit(
            "error: needs chromium and chromium-driver (apt-get install chromium chromium-driver)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument(f"--window-size={width},{height}")
    return webdriver.Chrome(service=Service(driver), options=options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="the study's results folder")
    parser.add_argument("output", type=Path, help="the PNG to write")
    parser.add_argument("--width", type=int, default=1100, help="window width (px)")
    parser.add_argument("--height", type=int, default=900, help="window height (px)")
    args = parser.parse_args()
    page = args.results.resolve() / "index.html"
    if not page.is_file():
        sys.exit(f"error: {page}: no study page (run the study first)")
    driver = browser(args.width, args.height)
    try:
        driver.get(page.as_uri())
        answers = driver.execute_script(
            "return [...document.querySelectorAll('.answer')].map((a) => "
            "a.querySelector('h3').innerText + ': ' + "
            "(a.querySelector('.pick strong') || {innerText: 'no answer'}).innerText)"
        )
        args.output.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(args.output))
    finally:
        driver.quit()
    print(f"{args.output}: {args.width}x{args.height} of {page} ({page.stat().st_size} bytes)")
    for answer in answers:
        print(f"  {answer}")


if __name__ == "__main__":
    main()
