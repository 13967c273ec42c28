"""A small real parallel corpus that needs no download: CLDR display names, through Babel.

The Unicode CLDR translates the names of territories, languages, scripts, currencies,
time zones, units, months and days into hundreds of locales; Babel ships that data. An
entry with the same key in two locales is a translation pair (``Germany`` ↔ ``जर्मनी``).
Entries that a locale leaves untranslated (the same text on both sides) or empty are left
out; pairs come in a fixed order (category, then key), so the corpus depends only on the
installed Babel version, which the log records. Short phrases, not sentences: enough for
a tiny translation model on a laptop, not for conclusions about translation quality.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import babel
from babel import Locale, UnknownLocaleError

from tokstudy.errors import TokstudyError

log = logging.getLogger(__name__)

#: Babel locale-data categories read, with the key prefix an entry must have (wide forms
#: of months and days, long unit names: the abbreviations would mostly repeat them)
CATEGORIES: dict[str, tuple[str, ...]] = {
    "territories": (),
    "languages": (),
    "scripts": (),
    "currency_names": (),
    "currency_names_plural": (),
    "meta_zones": (),
    "time_zones": (),
    "unit_display_names": (),
    "months": ("format", "wide"),
    "days": ("format", "wide"),
}


def _flatten(data: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """``(key path, text)`` of every string in nested locale data."""
    if isinstance(data, str):
        yield prefix, data
    elif isinstance(data, Mapping):
        for key, value in data.items():
            yield from _flatten(value, (*prefix, str(key)))


def _locale(code: str) -> Locale:
    try:
        return Locale.parse(code)
    except (UnknownLocaleError, ValueError):
        raise TokstudyError(f"nmt.corpus.builtin: CLDR (Babel) has no locale {code!r}") from None


def _entries(locale: Locale, category: str) -> dict[tuple[str, ...], str]:
    wanted = CATEGORIES[category]
    return {
        key: " ".join(text.split())
        for key, text in _flatten(locale._data[category])
        if key[: len(wanted)] == wanted
    }


def cldr_pairs(source: str, target: str) -> list[tuple[str, str]]:
    """Display-name pairs the CLDR gives in both locales, category by category, key order."""
    source_locale, target_locale = _locale(source), _locale(target)
    pairs = []
    for category in CATEGORIES:
        source_entries = _entries(source_locale, category)
        target_entries = _entries(target_locale, category)
        for key in sorted(source_entries.keys() & target_entries.keys()):
            pair = (source_entries[key], target_entries[key])
            if pair[0] and pair[1] and pair[0] != pair[1]:
                pairs.append(pair)
    return pairs


def write_cldr_corpus(languages: tuple[str, str], out_path: Path) -> int:
    """Write the CLDR pairs of two languages as a ``source<TAB>target`` file; the pair count."""
    pairs = cldr_pairs(*languages)
    if not pairs:
        raise TokstudyError(
            f"nmt.corpus.builtin: CLDR has no translated names for {'-'.join(languages)}"
        )
    with Path(out_path).open("w", encoding="utf-8", newline="\n") as handle:
        for source, target in pairs:
            handle.write(f"{source}\t{target}\n")
    log.info(
        "CLDR (Babel %s): %d %s display-name pairs written to %s",
        babel.__version__,
        len(pairs),
        "-".join(languages),
        out_path,
    )
    return len(pairs)
