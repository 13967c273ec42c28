"""The study page and ``tokstudy serve`` in a real browser: Debian's Chromium driven by
Selenium (headless). Without Chromium the tests are skipped with the reason; with ``CI``
set a missing Chromium is a failure.

``TOKSTUDY_DOCS_SCREENSHOT=1`` also writes the page's screenshot to
``docs/img/study-page.png`` (docs/study-page.md).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO
from page_support import build_tiny_page, tiny_study

from tokstudy.report.page.build import PageCell
from tokstudy.report.page.recommend import Criterion, StudyTables, recommendation_table
from tokstudy.report.page.recommend import pareto as python_pareto
from tokstudy.report.page.serve import Playground, PlaygroundServer
from tokstudy.tokenizers.registry import load_tokenizer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
WAIT_SECONDS = 20
#: the two tokenizers picked in the viewer
PICKED = ("hf_bpe", "hf_bytelevel_bpe")
DOCS_SCREENSHOT = REPO / "docs" / "img" / "study-page.png"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not (CHROMIUM and DRIVER):
        reason = (
            "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"
        )
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI requires them", pytrace=False)
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1280,1400")
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(WAIT_SECONDS)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[PageCell]]:
    root = tmp_path_factory.mktemp("results")
    cells = tiny_study(root)
    build_tiny_page(root, cells)
    return root, cells


def pick(driver: object, language: str, tokenizers: tuple[str, ...]) -> None:
    """Choose a language and exactly ``tokenizers`` in the viewer."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, "language")).select_by_value(language)
    for box in driver.find_elements(By.CSS_SELECTOR, "#tokenizers input"):
        if box.is_selected() != (box.get_attribute("value") in tokenizers):
            box.click()


def check_viewer(driver: object, cells: list[PageCell], language: str) -> int:
    """Every rendered row has as many token spans as the tokenizer's own encoding of the
    line's text (read back from the page); right-to-left lines run right to left.
    Returns the number of right-to-left rows checked."""
    from selenium.webdriver.common.by import By

    by_key = {cell.key: cell for cell in cells}
    tokenizers = {}
    blocks = driver.find_elements(By.CSS_SELECTOR, "#lines .block")
    assert blocks, "no line rendered"
    rtl = 0
    for block in blocks:
        original = block.find_element(By.CLASS_NAME, "original")
        text = driver.execute_script(
            "return state.samples[arguments[0]].lines[arguments[1]].text;",
            language,
            int(block.get_attribute("data-line")),
        )
        rows = block.find_elements(By.CLASS_NAME, "row")
        assert sorted(row.get_attribute("data-cell").split("|")[1] for row in rows) == sorted(
            PICKED
        )
        for row in rows:
            cell = by_key[row.get_attribute("data-cell")]
            if cell.key not in tokenizers:
                tokenizers[cell.key] = load_tokenizer(cell.directory)
            spans = row.find_elements(By.CSS_SELECTOR, ".tokens .tok")
            assert len(spans) == len(tokenizers[cell.key].encode(text)), (cell.key, text)
            assert f"{len(spans)} tokens" in row.find_element(By.CLASS_NAME, "count").text
            if original.get_attribute("dir") == "rtl" and len(spans) > 1:
                first, last = spans[0].rect, spans[-1].rect
                if first["y"] == last["y"]:  # one visual line: compare x
                    assert first["x"] > last["x"], (cell.key, text)
                    rtl += 1
    return rtl


def test_the_study_page_from_disk(
    browser: object, study: tuple[Path, list[PageCell]], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    root, cells = study
    browser.get((root / "index.html").as_uri())
    pick(browser, "fa", PICKED)
    assert check_viewer(browser, cells, "fa") > 0
    span = browser.find_element(By.CSS_SELECTOR, "#lines .tok")
    assert span.get_attribute("title").startswith(f"id {span.get_attribute('data-id')} · ")
    assert "training frequency" in span.get_attribute("title")
    # the panel: the page's Pareto front on the ticked criteria is the Python one
    rows = browser.find_elements(By.CSS_SELECTOR, "#rec-table tr[data-cell]")
    frame, criteria = recommendation_table(StudyTables.read(root / "tables/metrics.csv", {}), "en")
    expected = python_pareto(frame, [Criterion(**vars(c)) for c in criteria[:2]])
    shown = {row.get_attribute("data-cell"): row.get_attribute("class") for row in rows}
    assert shown == {
        f"{r.tokenizer}|{r.size}": "optimal" if r.pareto else "dominated"
        for r in expected.itertuples()
    }
    # the metrics table filters
    browser.find_element(By.ID, "metric-filter").send_keys("fa heldout fertility")
    assert browser.find_element(By.ID, "metric-count").text.startswith("3 of ")
    browser.save_screenshot(str(tmp_path / "study-page.png"))
    assert (tmp_path / "study-page.png").stat().st_size > 10_000
    if os.environ.get("TOKSTUDY_DOCS_SCREENSHOT") == "1":
        browser.find_element(By.ID, "metric-filter").clear()
        browser.execute_script("window.scrollTo(0, 0)")
        browser.set_window_size(1100, 900)
        browser.save_screenshot(str(DOCS_SCREENSHOT))


@pytest.fixture(scope="module")
def server(study: tuple[Path, list[PageCell]]) -> Iterator[str]:
    root, _ = study
    httpd = PlaygroundServer(("127.0.0.1", 0), Playground(root))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_serve_segments_typed_text_in_the_browser(
    browser: object, server: str, study: tuple[Path, list[PageCell]], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _, cells = study
    browser.get(server)
    pick(browser, "fa", PICKED)
    box = browser.find_element(By.ID, "text")
    box.send_keys("سلام، حال شما چطور است؟\nhello 😀 e\u0301 مخلوط")
    browser.find_element(By.ID, "segment").click()
    WebDriverWait(browser, WAIT_SECONDS).until(
        lambda d: d.find_element(By.ID, "live-status").text == "done"
    )
    assert check_viewer(browser, cells, "fa") > 0
    notes = " ".join(n.text for n in browser.find_elements(By.CSS_SELECTOR, "#lines .note"))
    assert "emoji" in notes and "mixed directions" in notes
    browser.save_screenshot(str(tmp_path / "serve.png"))
    assert (tmp_path / "serve.png").stat().st_size > 10_000
