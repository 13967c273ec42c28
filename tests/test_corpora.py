"""Corpus cleaning, splitting and their one-line errors."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokstudy.cli import main
from tokstudy.corpora.prepare import (
    CleaningStats,
    clean_lines,
    heldout_count,
    normalize_line,
    prepare_corpus,
    sha256_of,
    split_long_line,
)
from tokstudy.errors import TokstudyError


def _prepare(tmp_path: Path, source: Path, **settings: object) -> dict[str, int]:
    options = {"label": "xx", "heldout": 2, "seed": 1, **settings}
    return prepare_corpus(
        [source],
        tmp_path / "train.txt",
        tmp_path / "heldout.txt",
        tmp_path / "stats.json",
        **options,
    )


def test_cleaning_normalises_endings_bom_whitespace_and_drops_empty(tmp_path: Path) -> None:
    source = tmp_path / "raw.txt"
    source.write_bytes("\ufeffone\r\ntwo\rthree\n\n   \n  four  \n".encode())
    stats = CleaningStats()
    assert list(clean_lines([source], "xx", "error", stats)) == ["one", "two", "three", "four"]
    assert stats.lines_read == 6 and stats.empty_dropped == 2 and stats.lines_kept == 4


def test_gzip_input_is_recognised_by_content(tmp_path: Path) -> None:
    source = tmp_path / "raw.data"
    source.write_bytes(gzip.compress("α\nβ\n".encode()))
    assert list(clean_lines([source], "xx", "error", CleaningStats())) == ["α", "β"]


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    source = tmp_path / "bad.txt"
    source.write_bytes(b"fine\nalso fine\nbroken \xff here\n")
    with pytest.raises(TokstudyError, match=r"'xx'.*bad\.txt: invalid UTF-8 at line 3"):
        list(clean_lines([source], "xx", "error", CleaningStats()))
    stats = CleaningStats()
    assert list(clean_lines([source], "xx", "replace", stats))[2] == "broken \ufffd here"
    assert stats.invalid_lines_replaced == 1


CONLLU = """# sent_id = 1
# text = Wir verstehen das.
1	Wir	wir	PRON	_	_	2	nsubj	_	_
2	verstehen	verstehen	VERB	_	_	0	root	_	_
3	das	der	PRON	_	_	2	obj	_	SpaceAfter=No
4	.	.	PUNCT	_	_	2	punct	_	_

# sent_id = 2
1	Ohne	ohne	ADP	_	_	0	root	_	_

# text = Gut.
1	Gut	gut	ADJ	_	_	0	root	_	SpaceAfter=No
2	.	.	PUNCT	_	_	1	punct	_	_

"""


def test_conllu_sentences_are_the_lines_of_a_treebank_corpus(tmp_path: Path) -> None:
    plain = tmp_path / "a.conllu"
    plain.write_text(CONLLU, encoding="utf-8")
    packed = tmp_path / "b.conllu.gz"
    packed.write_bytes(gzip.compress(CONLLU.encode()))
    stats = CleaningStats()
    lines = list(clean_lines([plain, packed], "de", "error", stats))
    assert lines == ["Wir verstehen das.", "Gut."] * 2  # a sentence without "# text" is skipped
    assert stats.lines_kept == 4


def test_malformed_conllu_names_the_file(tmp_path: Path) -> None:
    source = tmp_path / "bad.conllu"
    source.write_text(
        "# text = Wort\nx\tWort\tWort\tNOUN\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8"
    )
    with pytest.raises(TokstudyError, match=r"bad\.conllu: not valid CoNLL-U"):
        list(clean_lines([source], "de", "error", CleaningStats()))


def test_missing_file_names_language_and_path(tmp_path: Path) -> None:
    with pytest.raises(TokstudyError, match=r"language 'xx': file not found: .*nope\.txt"):
        list(clean_lines([tmp_path / "nope.txt"], "xx", "error", CleaningStats()))


def test_split_is_seeded_complete_and_disjoint(tmp_path: Path) -> None:
    source = tmp_path / "raw.txt"
    source.write_text("".join(f"line {i}\n" for i in range(50)), encoding="utf-8")
    summary = _prepare(tmp_path, source, heldout=0.2, seed=3)
    train = (tmp_path / "train.txt").read_text().splitlines()
    held = (tmp_path / "heldout.txt").read_text().splitlines()
    assert summary["heldout_lines"] == len(held) == 10 and len(train) == 40
    assert sorted(train + held, key=lambda s: int(s.split()[1])) == [f"line {i}" for i in range(50)]
    again = tmp_path / "again"
    again.mkdir()
    _prepare(again, source, heldout=0.2, seed=3)
    assert (again / "heldout.txt").read_text().splitlines() == held
    other = tmp_path / "other"
    other.mkdir()
    _prepare(other, source, heldout=0.2, seed=4)
    assert (other / "heldout.txt").read_text().splitlines() != held
    assert json.loads((tmp_path / "stats.json").read_text())["train_lines"] == 40


def test_max_lines_caps_the_corpus(tmp_path: Path) -> None:
    source = tmp_path / "raw.txt"
    source.write_text("".join(f"{i}\n" for i in range(100)), encoding="utf-8")
    summary = _prepare(tmp_path, source, max_lines=30, heldout=5)
    assert summary["lines_used"] == 30 and summary["train_lines"] == 25


def test_empty_corpus_after_cleaning_is_an_error(tmp_path: Path) -> None:
    source = tmp_path / "blank.txt"
    source.write_text("\n  \n\ufeff\n", encoding="utf-8")
    with pytest.raises(TokstudyError, match="'xx': empty after cleaning"):
        _prepare(tmp_path, source)


@pytest.mark.parametrize("heldout", [0.0001, 10, 12])
def test_heldout_that_empties_a_split_is_an_error(heldout: float) -> None:
    with pytest.raises(TokstudyError, match="leaves no train or no held-out"):
        heldout_count(10, heldout, "xx")


def test_crlf_and_bom_lines_are_counted_once(tmp_path: Path) -> None:
    source = tmp_path / "crlf.txt"
    source.write_bytes(b"\xef\xbb\xbf" + b"".join(b"line %d\r\n" % i for i in range(400)))
    summary = _prepare(tmp_path, source, heldout=40)
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats == summary
    assert stats["lines_read"] == 400 and stats["empty_dropped"] == 0
    assert stats["lines_kept"] == 400 and stats["train_lines"] == 360


def test_a_lone_cr_still_ends_a_line(tmp_path: Path) -> None:
    source = tmp_path / "mac.txt"
    source.write_bytes(b"a\rb\r\rc\r")
    stats = CleaningStats()
    assert list(clean_lines([source], "xx", "error", stats)) == ["a", "b", "c"]
    assert stats.lines_read == 4 and stats.empty_dropped == 1


def test_nul_bytes_are_invalid_input(tmp_path: Path) -> None:
    source = tmp_path / "nul.txt"
    source.write_bytes(b"fine\nnul\x00 inside\n")
    with pytest.raises(TokstudyError, match=r"'xx'.*nul\.txt: NUL byte at line 2"):
        list(clean_lines([source], "xx", "error", CleaningStats()))
    summary = _prepare(tmp_path, source, heldout=1, on_invalid_utf8="replace")
    assert summary["nul_lines_replaced"] == 1
    text = (tmp_path / "train.txt").read_text() + (tmp_path / "heldout.txt").read_text()
    assert "\x00" not in text and "nul\ufffd inside" in text


@given(
    st.text(
        alphabet=st.sampled_from(["a", "é", "語", "😀", " ", "\t", "\u3000", "\u0301"]),
        min_size=1,
        max_size=300,
    ),
    st.integers(min_value=4, max_value=40),
)
def test_split_long_line_keeps_every_character_and_respects_the_limit(
    line: str, limit: int
) -> None:
    line = line.strip()
    pieces = split_long_line(line, limit)
    assert all(0 < len(piece.encode()) <= limit for piece in pieces)
    assert all(piece == piece.strip() for piece in pieces)
    assert "".join("".join(p.split()) for p in pieces) == "".join(line.split())
    if len(line.encode()) <= limit:
        assert pieces == ([line] if line else [])


def test_long_lines_split_at_whitespace_and_are_recorded(tmp_path: Path) -> None:
    words = " ".join(f"w{i:04d}" for i in range(2000))  # 11,999 bytes
    source = tmp_path / "long.txt"
    source.write_text(f"short\n{words}\n{'x' * 9000}\nend\n", encoding="utf-8")
    summary = _prepare(tmp_path, source, heldout=1, max_line_bytes=4096)
    lines = (tmp_path / "train.txt").read_text().splitlines()
    lines += (tmp_path / "heldout.txt").read_text().splitlines()
    assert max(len(line.encode()) for line in lines) <= 4096
    assert summary["long_lines_split"] == 2 and summary["long_line_pieces"] == 3 + 3
    assert summary["lines_kept"] == 2 + 6 and summary["lines_read"] == 4
    assert all(not line.startswith(" ") and "w0" in line for line in lines if "w0" in line)
    assert sorted(w for line in lines for w in line.split() if w.startswith("w")) == (words.split())


def test_prepare_corpus_verifies_the_checksum_of_a_download(tmp_path: Path) -> None:
    source = tmp_path / "download.raw"
    source.write_text("a b c\nd e f\n", encoding="utf-8")
    good = sha256_of(source)
    _prepare(tmp_path, source, heldout=1, checksums={str(source): good})
    source.write_text("a b c\nd e X\n", encoding="utf-8")
    with pytest.raises(TokstudyError) as error:
        _prepare(tmp_path, source, heldout=1, checksums={str(source): good})
    message = str(error.value)
    assert "\n" not in message and str(source) in message
    assert f"expected {good}" in message and f"got {sha256_of(source)}" in message


@given(
    st.lists(
        st.text(alphabet=st.sampled_from(["a", "語", " ", "\t", "\r", "\ufeff", "é"]), max_size=30),
        max_size=20,
    )
)
def test_cleaning_a_cleaned_corpus_changes_nothing(lines: list[str]) -> None:
    """What the metrics CLI relies on: a prepared corpus, cleaned again, is the same text."""
    with tempfile.TemporaryDirectory() as folder:
        raw = Path(folder) / "raw.txt"
        raw.write_text("\n".join(lines), encoding="utf-8")
        once = list(clean_lines([raw], "xx", "error", CleaningStats(), max_line_bytes=64))
        prepared = Path(folder) / "prepared.txt"
        prepared.write_text("".join(f"{line}\n" for line in once), encoding="utf-8")
        stats = CleaningStats()
        assert list(clean_lines([prepared], "xx", "error", stats, max_line_bytes=64)) == once
        assert stats.lines_read == stats.lines_kept == len(once)


def test_nfkc_normalisation_is_applied_before_the_split_and_counted(tmp_path: Path) -> None:
    source = tmp_path / "raw.txt"
    # NBSP, a ligature, full-width digits and an ideographic space at the line's start
    source.write_text("a.\u00a0The\nthe \ufb01sh\n\uff11\uff12 apples\n\u3000plain\nsame\n")
    summary = _prepare(tmp_path, source, heldout=1, normalize="nfkc")
    lines = (tmp_path / "train.txt").read_text().splitlines()
    lines += (tmp_path / "heldout.txt").read_text().splitlines()
    assert sorted(lines) == sorted(["a. The", "the fish", "12 apples", "plain", "same"])
    # by hand: 4 lines changed; characters replaced: NBSP, the ligature, two digits, U+3000
    assert summary["normalized_lines"] == 4 and summary["normalized_chars_changed"] == 5
    assert json.loads((tmp_path / "stats.json").read_text())["normalize"] == "nfkc"


def test_no_normalisation_keeps_the_text_and_counts_nothing(tmp_path: Path) -> None:
    source = tmp_path / "raw.txt"
    source.write_text("a.\u00a0The\n\uff11\uff12\nx\n")
    summary = _prepare(tmp_path, source, heldout=1)
    text = (tmp_path / "train.txt").read_text() + (tmp_path / "heldout.txt").read_text()
    assert "\u00a0" in text and "\uff11" in text
    assert summary["normalized_lines"] == summary["normalized_chars_changed"] == 0


def test_nfc_composes_but_keeps_compatibility_characters() -> None:
    stats = CleaningStats()
    assert normalize_line("e\u0301 \ufb01", "nfc", stats) == "\u00e9 \ufb01"
    # the decomposed e + combining accent become one character: 2 characters replaced
    assert stats.normalized_lines == 1 and stats.normalized_chars_changed == 2


def test_an_unknown_normal_form_names_the_key() -> None:
    with pytest.raises(TokstudyError, match=r"corpus_defaults\.normalize: unknown form 'nfd'"):
        normalize_line("x", "nfd", CleaningStats())


@given(st.text(max_size=40), st.sampled_from(["nfc", "nfkc"]))
def test_normalising_is_idempotent_and_changes_at_most_every_character(
    text: str, form: str
) -> None:
    stats = CleaningStats()
    once = normalize_line(text, form, stats)
    assert normalize_line(once, form, CleaningStats()) == once
    assert 0 <= stats.normalized_chars_changed <= len(text)
    assert stats.normalized_lines == (once != text)


@pytest.mark.parametrize(
    "where",
    [
        "corpus_defaults: {normalize: nfd}",
        "languages: {en: {chatterbot: english, normalize: NFKC}}",
    ],
)
def test_an_unknown_normal_form_in_a_config_is_one_line_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    config = tmp_path / "study.yaml"
    base = "languages: {en: {chatterbot: english}}\n" if where.startswith("corpus") else ""
    config.write_text(f"{base}{where}\ntokenizers: {{char: {{}}}}\nmetrics: [mu]\n")
    assert main(["check-config", str(config)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "normalize" in lines[0] and "is not one of" in lines[0]
