"""The README's result sentences quote figures from docs/: each quoted figure agrees with the
table (or the stated count) it comes from. The figures are read from both sides, never
written here: a rerun that changes a table fails this test until the README follows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO

DOCS = REPO / "docs"


def text_of(path: Path) -> str:
    """A Markdown file with its line breaks and runs of spaces collapsed to one space."""
    return re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))


def readme() -> str:
    return text_of(REPO / "README.md")


def quoted(pattern: str, text: str) -> tuple[str, ...]:
    """The groups of the one match of ``pattern`` in ``text`` (fails when it is missing)."""
    found = re.findall(pattern, text)
    assert len(found) == 1, f"expected one match of {pattern!r}, found {len(found)}"
    return found[0] if isinstance(found[0], tuple) else (found[0],)


def number(cell: str) -> float:
    """The first number of a table cell or quoted figure (``**0.017**``, ``−0.52 [...]``,
    ``13.4 (kkh)``, ``1,077 s``), with a Unicode minus read as a minus."""
    match = re.search(r"[−-]?\d[\d,]*(?:\.\d+)?", cell)
    assert match, f"no number in {cell!r}"
    return float(match.group().replace("−", "-").replace(",", ""))


def agrees(figure: str, value: float) -> bool:
    """A quoted figure agrees with a value when it is the value rounded to its own digits."""
    digits = len(figure.split(".")[1]) if "." in figure else 0
    return round(value, digits) == pytest.approx(number(figure))


def tables(path: Path) -> list[list[list[str]]]:
    """Every Markdown table of a file, as rows of cells (header first, rule line dropped)."""
    found, current = [], []
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", cell) for cell in cells):
                current.append(cells)
        elif current:
            found.append(current)
            current = []
    return found


def table_with(path: Path, *headers: str) -> tuple[list[str], list[list[str]]]:
    """The one table of ``path`` whose header has every one of ``headers``."""
    matches = [t for t in tables(path) if all(h in t[0] for h in headers)]
    assert len(matches) == 1, f"{path.name}: {len(matches)} tables with columns {headers}"
    return matches[0][0], matches[0][1:]


# ---------------------------------------------------------------- the HFT paper's claims


def hft_claims() -> dict[str, dict[str, str]]:
    """docs/reproduction.md's claims table, by language."""
    header, rows = table_with(DOCS / "reproduction.md", "language", "ν higher at every size")
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows}


def test_the_hft_claim_counts_are_the_claims_table() -> None:
    claims = hft_claims()
    nu = sorted(lang for lang, row in claims.items() if row["ν higher at every size"] == "yes")
    f95 = [lang for lang, row in claims.items() if row["F95% higher from size on"] != "never"]
    mu = sorted(lang for lang, row in claims.items() if row["lower μ at most sizes"] == "yes")
    total = str(len(claims))
    # README's bullet
    readme_nu, readme_total, readme_f95 = quoted(
        r"ν higher than BPE and Unigram at every size for (\d+) of (\d+) languages, "
        r"F95% higher above a size threshold for (\d+)",
        readme(),
    )
    assert (readme_nu, readme_total, readme_f95) == (str(len(nu)), total, str(len(f95)))
    # reproduction.md's own summary of the table
    doc = text_of(DOCS / "reproduction.md")
    doc_nu, doc_total, exceptions = quoted(
        r"holds for (\d+) of (\d+) languages at every size; (.*?) are the exceptions", doc
    )
    assert (doc_nu, doc_total) == (str(len(nu)), total)
    named = re.findall(r"([a-z]+)(?: \((\d+/\d+)\))?", exceptions.replace(" and ", ", "))
    assert sorted(lang for lang, _ in named) == sorted(set(claims) - set(nu))
    for lang, sizes in named:
        assert not sizes or claims[lang]["sizes with higher ν"] == sizes, lang
    (doc_f95,) = quoted(r"F95% higher above a size threshold\*\*: holds for (\d+) languages", doc)
    assert doc_f95 == str(len(f95))
    doc_mu, listed = quoted(r"lower μ at most sizes for only (\d+) languages \(([^)]*)\)", doc)
    assert doc_mu == str(len(mu)) and sorted(listed.split(", ")) == mu


# ---------------------------------------------------------------- UDHR parity


def udhr_fairness() -> tuple[list[str], list[list[str]]]:
    return table_with(DOCS / "parity-udhr.md", "tokenizer", "UDHR: languages")


def test_the_udhr_language_and_script_counts_agree() -> None:
    header, rows = udhr_fairness()
    languages = {row[header.index("UDHR: languages")] for row in rows}
    assert len(languages) == 1, f"tokenizers cover different counts: {languages}"
    (count,) = languages
    doc = text_of(DOCS / "parity-udhr.md")
    (title,) = quoted(r"^# Tokenization parity on the UDHR: (\d+) languages", doc)
    doc_languages, scripts = quoted(r"on (\d+) ISO 639-3 languages in (\d+) dominant scripts", doc)
    assert title == doc_languages == count
    text = readme()
    assert quoted(r"translations \((\d+) languages in (\d+) dominant scripts\)", text) == (
        count,
        scripts,
    )
    assert quoted(r"\*\*(\d+) languages\*\* \(UDHR", text) == (count,)


def test_the_udhr_highest_premiums_are_the_tables() -> None:
    header, rows = udhr_fairness()
    # two columns are called "highest (language)": the UDHR's first, then PUD's
    udhr_column, pud_column = (i for i, name in enumerate(header) if name.startswith("highest"))
    udhr = [number(row[udhr_column]) for row in rows]
    pud = [number(row[pud_column]) for row in rows]
    low, high, pud_low, pud_high = quoted(
        r"highest premiums are ([\d.]+)–([\d.]+) against ([\d.]+)–([\d.]+) on the 20 PUD",
        readme(),
    )
    assert agrees(low, min(udhr)) and agrees(high, max(udhr))
    assert agrees(pud_low, min(pud)) and agrees(pud_high, max(pud))


# ---------------------------------------------------------------- the predictive study


def test_the_open_verdict_quotes_the_variant_piece_and_its_planted_power() -> None:
    # the README calls the cell-level answer not citable, quotes the tokenizer-level
    # within-family estimate of the variant study's pooled pieces (docs/results.md's table)
    # and how often its design as run finds a planted association (docs/statistics.md)
    text = readme()
    assert "not citable as stated" in text
    estimate, low, high, p = quoted(
        r"continued words vs bits per byte \*\*(−?[\d.]+) \[(−?[\d.]+), (−?[\d.]+)\]\*\* "
        r"within families \(p = ([\d.]+)\)",
        text,
    )
    header, rows = table_with(
        DOCS / "results.md", "level", "continued words (held-out) vs bits per byte: ρ [95 % CI]"
    )
    pooled = "within families, English, Finnish and Marathi pooled"
    (row,) = [dict(zip(header, r, strict=True)) for r in rows if r[0] == pooled]
    interval = row["continued words (held-out) vs bits per byte: ρ [95 % CI]"]
    assert interval.strip("*") == f"{estimate} [{low}, {high}]".replace("**", "")
    assert agrees(p, number(row["p"]))
    (quoted_power,) = quoted(r"planted within-family r = 0\.6 in ([\d.]+) % of datasets", text)
    header, rows = table_with(DOCS / "statistics.md", "design", "seeds", "called")
    (power,) = [
        dict(zip(header, r, strict=True))
        for r in rows
        if r[0].startswith("3 × 9, `config/predictive_variants.yaml` as run")
        and r[2] == "association, r = 0.6"
    ]
    assert agrees(quoted_power, number(power["called"]))


# ---------------------------------------------------------------- LLM tokenizers, speed


def test_the_tokens_per_word_gap_is_the_llm_table() -> None:
    header, rows = table_with(DOCS / "results.md", "language", "best pretrained")
    # the pretrained columns: not a trained "tokenizer size" nor a "best …" column
    llm = [c for c in header[1:] if not re.search(r" \d+$|^best", c)]
    by_language = {row[0]: dict(zip(header, row, strict=True)) for row in rows}
    language, tokenizer = max(
        ((lang, c) for lang in by_language for c in llm if lang != "ja"),  # ja: no spaces
        key=lambda pair: number(by_language[pair[0]][pair[1]]),
    )
    highest = number(by_language[language][tokenizer])
    english = number(by_language["en"][tokenizer])
    times, figure, english_figure = quoted(
        r"pay up to (\w+) times more tokens per word \(Burmese ([\d.]+) with Llama 3\.1, "
        r"English ([\d.]+)\)",
        readme(),
    )
    assert (language, tokenizer) == ("my", "llama_3_1")
    assert agrees(figure, highest) and agrees(english_figure, english)
    multiple = {"five": 5, "ten": 10, "fifteen": 15, "twenty": 20, "thirty": 30}[times]
    assert multiple <= highest / english < multiple * 1.25


def test_the_readme_speed_is_a_benchmark_run() -> None:
    wall, commit, ratio = quoted(
        r"HFT-2022 study ran in ([\d,]+ s) at ([0-9a-f]{7}), ([\d.]+)× its CPU floor", readme()
    )
    header, rows = table_with(DOCS / "benchmarks.md", "run", "wall ÷ floor")
    runs = [
        dict(zip(header, row, strict=True))
        for row in rows
        if row[header.index("code")].startswith(commit)
    ]
    assert any(
        number(run["wall"]) == number(wall) and agrees(ratio, number(run["wall ÷ floor"]))
        for run in runs
    ), f"no run at {commit} with {wall} and {ratio}×"
    # the earlier figures the README names are each in the doc it links
    earlier = quoted(
        r"earlier code: (\d+ min \d+ s) at (\w+), (\d+ min \d+ s) at (\w+)\)", readme()
    )
    for figure, at in zip(earlier[::2], earlier[1::2], strict=True):
        sources = text_of(DOCS / "reproduction.md") + text_of(DOCS / "benchmarks.md")
        assert re.search(rf"{at}\b[^.]*?{figure}|{figure}[^.]*?{at}\b", sources), (figure, at)
