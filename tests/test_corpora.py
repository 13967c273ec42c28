"""Corpus cleaning, splitting and their one-line errors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tokstudy.corpora import CleaningStats, clean_lines, heldout_count, prepare_corpus
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
    assert stats.empty_dropped == 3 and stats.lines_kept == 4


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
