"""Unicode ranges of the CJK scripts: the one place that says what counts as "CJK".

BBPE (:mod:`tokstudy.tokenizers.bbpe`) isolates every character in these ranges as a
word of its own. The ranges are whole Unicode blocks (Unicode 16), so characters that
later Unicode versions assign inside a block are covered without an update.
"""

from __future__ import annotations

#: CJK ideographs: unified ideographs, extensions A–I and the compatibility blocks
CJK_IDEOGRAPH_RANGES: tuple[tuple[int, int], ...] = (
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x2A6DF),  # Extension B
    (0x2A700, 0x2B73F),  # Extension C
    (0x2B740, 0x2B81F),  # Extension D
    (0x2B820, 0x2CEAF),  # Extension E
    (0x2CEB0, 0x2EBEF),  # Extension F
    (0x2EBF0, 0x2EE5F),  # Extension I
    (0x2F800, 0x2FA1F),  # CJK Compatibility Ideographs Supplement
    (0x30000, 0x3134F),  # Extension G
    (0x31350, 0x323AF),  # Extension H
)

#: Japanese kana (hiragana, katakana and their extensions, halfwidth katakana)
KANA_RANGES: tuple[tuple[int, int], ...] = (
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0x31F0, 0x31FF),  # Katakana Phonetic Extensions
    (0xFF66, 0xFF9F),  # Halfwidth Katakana (letters; U+FF61–FF65 are punctuation)
    (0x1AFF0, 0x1AFFF),  # Kana Extended-B
    (0x1B000, 0x1B0FF),  # Kana Supplement
    (0x1B100, 0x1B12F),  # Kana Extended-A
    (0x1B130, 0x1B16F),  # Small Kana Extension
)

#: Korean Hangul syllables and jamo
HANGUL_RANGES: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x3130, 0x318F),  # Hangul Compatibility Jamo
    (0xA960, 0xA97F),  # Hangul Jamo Extended-A
    (0xAC00, 0xD7AF),  # Hangul Syllables
    (0xD7B0, 0xD7FF),  # Hangul Jamo Extended-B
    (0xFFA0, 0xFFDC),  # Halfwidth Hangul letters
)

#: every CJK range, sorted by start
CJK_RANGES: tuple[tuple[int, int], ...] = tuple(
    sorted(CJK_IDEOGRAPH_RANGES + KANA_RANGES + HANGUL_RANGES)
)


def cjk_regex_class_body() -> str:
    r"""The CJK ranges as the inside of a regex character class (``\Uxxxxxxxx-\Uxxxxxxxx``)."""
    return "".join(f"\\U{start:08X}-\\U{end:08X}" for start, end in CJK_RANGES)
