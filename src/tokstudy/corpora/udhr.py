"""The Universal Declaration of Human Rights as a multi-parallel corpus (``../shared/udhr``).

A UDHR folder holds ``index.tsv`` (a row per translation: ``code``, ``bcp47``, ``iso6393``,
``name``, ``direction``, ``stage``, ``latitude``, ``longitude``) and
``declaration/<code>.html``, whose ``<article data-number="N">`` elements hold the articles.
:func:`read_articles` parses a file with :mod:`html.parser`: an article's text is its
``<p>`` and ``<li>`` elements in document order, one per line (whitespace collapsed as a
browser does), its heading left out; only articles 1-30 are kept (the preamble is missing
from some files). Translations are aligned on the article number, never on paragraph order.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any

import regex
from fontTools import unicodedata as font_unicodedata

from tokstudy.errors import TokstudyError

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

#: the articles compared (the preamble and anything else left out)
ARTICLES = range(1, 31)
INDEX_FILE = "index.tsv"
DECLARATION_DIR = "declaration"
INDEX_COLUMNS = ("code", "bcp47", "iso6393", "name", "direction", "latitude", "longitude")
#: ``languages`` of a tokenizer that takes part on every translation (a pretrained one)
EVERY_TRANSLATION = ("*",)
#: the elements whose text is an article's text, one line each
TEXT_ELEMENTS = frozenset({"p", "li"})
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
#: HTML's ASCII whitespace, collapsed to one space (a no-break space is text)
HTML_WHITESPACE = re.compile(r"[ \t\n\r\f]+")
#: scripts that are not a writing system of their own (Common, Inherited, Unknown)
NEUTRAL_SCRIPTS = frozenset({"Zyyy", "Zinh", "Zzzz"})


class _ArticleParser(HTMLParser):
    """Collects the lines of each ``<article data-number>`` (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        super().__init__(convert_charrefs=True)
        self.path = path
        self.articles: dict[int, list[str]] = {}
        self._article: int | None = None
        self._heading = 0  # open headings inside the current article
        self._text = 0  # open <p>/<li> inside the current article
        self._line: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._article is None:
            if tag == "article" and "data-number" in dict(attrs):
                self._open_article(dict(attrs)["data-number"])
            return
        if tag in HEADINGS:
            self._heading += 1
        elif tag in TEXT_ELEMENTS:
            self._flush()
            self._text += 1

    def handle_endtag(self, tag: str) -> None:
        if self._article is None:
            return
        if tag == "article":  # articles do not nest
            self._flush()
            self._article = None
        elif tag in HEADINGS:
            self._heading = max(0, self._heading - 1)
        elif tag in TEXT_ELEMENTS:
            self._flush()
            self._text = max(0, self._text - 1)

    def handle_data(self, data: str) -> None:
        if self._article is not None and self._text and not self._heading:
            self._line.append(data)

    def _open_article(self, value: str | None) -> None:
        if value is None or not value.strip().isdigit():
            raise TokstudyError(f"{self.path}: article data-number {value!r} is not a number")
        number = int(value)
        if number in self.articles:
            raise TokstudyError(f"{self.path}: article {number} appears twice")
        self.articles[number] = []
        self._article, self._heading, self._text = number, 0, 0

    def _flush(self) -> None:
        line = HTML_WHITESPACE.sub(" ", "".join(self._line)).strip()
        if line and self._article is not None:
            self.articles[self._article].append(line)
        self._line = []


def parse_articles(markup: str, path: Path) -> dict[int, str]:
    """Article number → text (its ``<p>``/``<li>`` lines joined by newlines) of the UDHR
    HTML ``markup`` read from ``path``, articles 1-30 with text only, sorted. Markup without
    ``<article data-number>`` is not a UDHR translation: a one-line error naming ``path``."""
    parser = _ArticleParser(path)
    parser.feed(markup)
    parser.close()
    if not parser.articles:
        raise TokstudyError(f"{path}: not a UDHR translation (no <article data-number>)")
    return {
        number: "\n".join(lines)
        for number, lines in sorted(parser.articles.items())
        if number in ARTICLES and lines
    }


def read_articles(path: Path) -> dict[int, str]:
    """:func:`parse_articles` of one UTF-8 file."""
    path = Path(path)
    try:
        markup = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise TokstudyError(f"{path}: not UTF-8 ({err.reason} at byte {err.start})") from None
    return parse_articles(markup, path)


def read_index(root: Path) -> pd.DataFrame:
    """``index.tsv`` of a UDHR folder, indexed by ``code`` (a one-line error without it)."""
    import pandas as pd  # only when a UDHR parity is configured: the study's import stays light

    path = Path(root) / INDEX_FILE
    if not path.is_file():
        raise TokstudyError(f"{root}: no {INDEX_FILE} (not a UDHR folder)")
    table = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    missing = [column for column in INDEX_COLUMNS if column not in table.columns]
    if missing:
        raise TokstudyError(f"{path}: no column {', '.join(missing)}")
    for column in ("latitude", "longitude"):
        table[column] = pd.to_numeric(table[column], errors="coerce")
    return table.set_index("code").sort_index()


def translation_file(root: Path, code: str) -> Path:
    """The HTML file of one translation."""
    return Path(root) / DECLARATION_DIR / f"{code}.html"


def _unknown(what: str, code: str, known: Iterable[str]) -> TokstudyError:
    close = difflib.get_close_matches(code, sorted(set(known)), n=5, cutoff=0.5)
    hint = f"closest: {', '.join(close)}" if close else "no close code"
    return TokstudyError(f"{what}: {code!r} is not a UDHR translation or ISO 639-3 code ({hint})")


def select_codes(
    index: pd.DataFrame, languages: Sequence[str] | None, reference: str, key: str
) -> list[str]:
    """The translations compared, sorted: the reference and those ``languages`` names (a
    file code such as ``cmn_hans``, or an ISO 639-3 code for all its varieties), or every
    translation. An unknown code is a one-line error naming ``key`` and the closest codes."""
    codes = set(index.index)
    if reference not in codes:
        raise _unknown(f"{key}.reference", reference, codes)
    if languages is None:
        return sorted(codes)
    chosen = {reference}
    for language in languages:
        varieties = set(index.index[index["iso6393"] == language])
        if language not in codes and not varieties:
            raise _unknown(f"{key}.languages", language, codes | set(index["iso6393"]))
        chosen |= varieties or {language}
    return sorted(chosen)


def translations_of(index: pd.DataFrame, language: str) -> list[str]:
    """The translations of a study language code: those whose ISO 639-3 code or BCP 47
    primary subtag is ``language`` (``en`` → ``eng``; ``zh`` → every Mandarin variety)."""
    primary = index["bcp47"].str.split("-").str[0]
    return sorted(index.index[(index["iso6393"] == language) | (primary == language)])


def dominant_script(text: str) -> tuple[str, float]:
    """The ISO 15924 code of the script most of the text's letters (``\\p{L}``) belong to,
    from the Unicode Script property, and that script's share of the letters; ``("Zyyy",
    0.0)`` for a text without letters. Ties go to the alphabetically first code."""
    letters = Counter(regex.findall(r"\p{L}", text))
    scripts: Counter[str] = Counter()
    for letter, count in letters.items():
        script = font_unicodedata.script(letter)
        if script not in NEUTRAL_SCRIPTS:
            scripts[script] += count
    if not scripts:
        return "Zyyy", 0.0
    best = min(scripts, key=lambda script: (-scripts[script], script))
    return best, scripts[best] / sum(scripts.values())


def script_name(code: str) -> str:
    """The Unicode name of an ISO 15924 script code (``Latn`` → ``Latin``)."""
    return font_unicodedata.script_name(code, default=code)


def read_translations(files: Mapping[str, Path]) -> dict[str, dict[int, str]]:
    """Code → article number → text, for each translation file (sorted by code)."""
    return {code: read_articles(Path(files[code])) for code in sorted(files)}


def udhr_coverage(
    entries: Sequence[Mapping[str, Any]],
    index: pd.DataFrame,
    codes: Sequence[str],
    reference: str,
    record: dict[str, Any],
) -> dict[str, dict[str, Path]]:
    """Label → translation code → tokenizer directory, for the labels that cover the
    reference and another translation of ``codes``.

    An entry's ``languages`` are study language codes (its translations: those of
    :func:`~tokstudy.corpora.udhr.translations_of`) or
    :data:`~tokstudy.corpora.udhr.EVERY_TRANSLATION`. A language without a translation,
    and a label left with too little, is logged and recorded under ``skipped_tokenizers``.
    """
    selected = set(codes)
    groups: dict[str, dict[str, Path]] = {}
    for entry in entries:
        label, directory = entry["label"], Path(entry["directory"])
        group = groups.setdefault(label, {})
        if tuple(entry["languages"]) == EVERY_TRANSLATION:
            group |= dict.fromkeys(sorted(selected), directory)
            continue
        for language in entry["languages"]:
            found = sorted(set(translations_of(index, language)) & selected)
            if not found:
                reason = f"{language}: no UDHR translation of this language among those compared"
                log.info("%s (%s); left out", label, reason)
                record["skipped_tokenizers"].setdefault(label, []).append(reason)
            group |= dict.fromkeys(found, directory)
    coverage = {}
    for label, group in groups.items():
        if reference in group and len(group) > 1:
            coverage[label] = dict(sorted(group.items()))
            continue
        covered = ", ".join(sorted(group)) or "no translation"
        reason = f"covers {covered}: needs the reference {reference} and another translation"
        log.info("%s: %s; left out", label, reason)
        record["skipped_tokenizers"].setdefault(label, []).append(reason)
    if not coverage:
        raise TokstudyError(f"UDHR parity: no tokenizer covers {reference} and another translation")
    return coverage
