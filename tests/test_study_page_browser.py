"""The study page and ``tokstudy serve`` in a real browser: Debian's Chromium driven by
Selenium (headless). Without Chromium the tests are skipped with the reason; with ``CI``
set a missing Chromium is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from page_support import build_tiny_page, tiny_study

from tokstudy.report.page.build import PageCell
from tokstudy.report.page.recommend import Criterion, StudyTables, recommendation_table
from tokstudy.report.page.recommend import pareto as python_pareto
from tokstudy.report.page.serve import Playground, PlaygroundServer
from tokstudy.report.plots import plot_metric
from tokstudy.tokenizers.registry import load_tokenizer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
WAIT_SECONDS = 20
#: the two tokenizers picked in the viewer
PICKED = ("hf_bpe", "hf_bytelevel_bpe")


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
    plot = root / "plots" / "metrics" / "fertility_heldout.png"
    plot.parent.mkdir(parents=True)
    plot_metric(pd.read_csv(root / "tables" / "metrics.csv"), "fertility", "heldout", [plot])
    build_tiny_page(root, cells, [plot])
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
    # the metrics table filters (open its collapsed section first)
    browser.find_element(By.ID, "metric-summary").click()
    browser.find_element(By.ID, "metric-filter").send_keys("fa heldout fertility")
    assert browser.find_element(By.ID, "metric-count").text.startswith("4 of ")  # 4 cells
    browser.save_screenshot(str(tmp_path / "study-page.png"))
    assert (tmp_path / "study-page.png").stat().st_size > 10_000


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
    # ChromeDriver types only characters of the BMP (no emoji): the text is set, as pasted
    typed = "سلام، حال شما چطور است؟\nhello 😀 e\u0301 مخلوط"
    browser.execute_script("document.getElementById('text').value = arguments[0]", typed)
    browser.find_element(By.ID, "segment").click()
    WebDriverWait(browser, WAIT_SECONDS).until(
        lambda d: d.find_element(By.ID, "live-status").text == "done"
    )
    assert check_viewer(browser, cells, "fa") > 0
    notes = " ".join(n.text for n in browser.find_elements(By.CSS_SELECTOR, "#lines .note"))
    assert "emoji" in notes and "mixed directions" in notes
    browser.save_screenshot(str(tmp_path / "serve.png"))
    assert (tmp_path / "serve.png").stat().st_size > 10_000


#: elements whose text must never be cut off (a label wider than its box)
LABELS = "th, td, .label, figcaption, legend, h1, h2, h3, .pick, .verdict, summary, .note"


def layout_problems(driver: object) -> list[str]:
    """What overflows: the page wider than the window, or a label wider than its box."""
    return driver.execute_script(
        """
        const found = [];
        const page = document.documentElement;
        if (page.scrollWidth > window.innerWidth) found.push(`page ${page.scrollWidth}px wide`);
        for (const node of document.querySelectorAll(arguments[0])) {
          if (!node.offsetParent || node.clientWidth === 0) continue;  // hidden or inline
          const text = `${node.tagName} ${node.textContent.slice(0, 40)}`;
          if (node.scrollWidth > node.clientWidth + 1) found.push(text);
        }
        return found;
        """,
        LABELS,
    )


def right_margin_is_blank(screenshot: Path, driver: object) -> bool:
    """Whether the page's right margin (between the content and the scroll bar) is plain
    background in the screenshot: nothing runs past the content's edge."""
    from PIL import Image

    image = Image.open(screenshot).convert("RGB")
    ratio = image.width / driver.execute_script("return window.innerWidth")
    margin = driver.execute_script(
        "const b = document.body; return window.innerWidth - b.getBoundingClientRect().right"
    )
    scrollbar = driver.execute_script(
        "return window.innerWidth - document.documentElement.clientWidth"
    )
    left, right = int((margin - 2) * ratio), int(scrollbar * ratio) + 2
    assert margin > 10, "the body has no right margin to check"
    strip = image.crop((image.width - left, 0, image.width - right, image.height))
    return bool((np.asarray(strip) == 255).all())


def test_the_page_opens_on_the_answer_with_its_uncertainty(
    browser: object, study: tuple[Path, list[PageCell]], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    root, _ = study
    browser.set_window_size(1280, 1400)
    browser.get((root / "index.html").as_uri())
    # the answer is the first thing on the page, before the viewer
    answer = browser.find_element(By.ID, "answer")
    assert (
        answer.rect["y"] < 250
        and answer.rect["y"] < browser.find_element(By.ID, "viewer").rect["y"]
    )
    for language in ("en", "fa"):
        table = pd.read_csv(root / "tables" / f"recommendation_{language}.csv", dtype={"size": str})
        box = browser.find_element(By.CSS_SELECTOR, f'.answer[data-language="{language}"]')
        rows = box.find_elements(By.CSS_SELECTOR, "tr[data-cell]")
        shown = {row.get_attribute("data-cell"): row.get_attribute("class") for row in rows}
        expected = {
            f"{r.tokenizer}|{r.size}": "recommended" if r.recommended else "indistinguishable"
            for r in table.itertuples()
            if r.recommended or r.indistinguishable
        }
        assert shown == expected and "recommended" in shown.values()
        for row in rows:  # value [low, high] of each ranked metric, as the table has them
            line = table.set_index(table["tokenizer"] + "|" + table["size"]).loc[
                row.get_attribute("data-cell")
            ]
            numbers = [float(x) for x in re.findall(r"[\d.]+", " ".join(
                cell.text for cell in row.find_elements(By.TAG_NAME, "td")[2:]
            ))]  # fmt: skip
            wanted = [line[f"{m}{end}"] for m in ("fertility", "bytes_per_token")
                      for end in ("", "_low", "_high")]  # fmt: skip
            assert numbers == pytest.approx(wanted, rel=1e-3)
        verdict = box.find_element(By.CLASS_NAME, "verdict").text
        alike = table[table["indistinguishable"]]
        assert ("Indistinguishable from" in verdict) == (len(alike) > 0)
        assert all(f"{r.tokenizer} {r.size}" in verdict for r in alike.itertuples())
    # the tiny study has a pair the 20 held-out lines cannot tell apart
    assert "indistinguishable" in {
        row.get_attribute("class") for row in browser.find_elements(By.CSS_SELECTOR, "#answers tr")
    }
    # opens on the study's first language with every tokenizer shown
    assert browser.find_element(By.ID, "language").get_attribute("value") == "en"
    boxes = browser.find_elements(By.CSS_SELECTOR, "#tokenizers input")
    assert len(boxes) == 4 and all(box.is_selected() for box in boxes)
    # the metrics table is collapsed, then paged
    assert not browser.find_element(By.ID, "metric-table").is_displayed()
    browser.find_element(By.ID, "metric-summary").click()
    rows = browser.find_elements(By.CSS_SELECTOR, "#metric-table tr")
    assert len(rows) == 1 + 50  # the header and the first page
    browser.find_element(By.ID, "metric-next").click()
    assert browser.find_element(By.ID, "metric-page").text.startswith("rows 51–")
    # nothing overflows or is cut off, wide or narrow; the screenshots agree
    for width in (1280, 760):
        browser.set_window_size(width, 1400)
        assert layout_problems(browser) == [], width
        shot = tmp_path / f"page-{width}.png"
        browser.save_screenshot(str(shot))
        assert right_margin_is_blank(shot, browser), width


def test_a_plot_opens_large_and_closes(browser: object, study: tuple[Path, list[PageCell]]) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    root, _ = study
    browser.set_window_size(1280, 1000)
    browser.get((root / "index.html").as_uri())
    thumbnail = browser.find_element(By.CSS_SELECTOR, "#plot-list img")
    browser.execute_script("arguments[0].scrollIntoView()", thumbnail)
    caption = browser.find_element(By.CSS_SELECTOR, "#plot-list figcaption").text
    assert caption == "plots/metrics/fertility_heldout.png"
    thumbnail.click()
    large = browser.find_element(By.ID, "lightbox-image")
    assert browser.find_element(By.ID, "lightbox").is_displayed()
    assert large.size["width"] > 1.5 * thumbnail.size["width"]
    assert browser.execute_script("return arguments[0].naturalWidth", large) > 0  # it loaded
    ActionChains(browser).send_keys(Keys.ESCAPE).perform()
    assert not browser.find_element(By.ID, "lightbox").is_displayed()


def test_a_script_without_a_font_gets_a_note(
    browser: object, study: tuple[Path, list[PageCell]]
) -> None:
    from selenium.webdriver.common.by import By

    root, _ = study
    browser.get((root / "index.html").as_uri())
    missing = browser.execute_script("return tokstudyMissingGlyphs('Hello \\u{10FFFC}')")
    assert missing == ["\U0010fffc"]  # a private-use character: no font has it
    assert browser.execute_script("return tokstudyMissingGlyphs('Hello world')") == []
    assert not browser.find_elements(By.CSS_SELECTOR, ".font-note")  # Latin text: no note
    browser.execute_script(
        "const line = {text: 'x \\u{10FFFC}', source: 'word', dir: 'ltr', notes: []};"
        "state.samples.en.lines.push(line); renderLines();"
    )
    note = browser.find_element(By.CSS_SELECTOR, ".font-note").text
    assert "no font for 1 character(s)" in note and "Install" in note
