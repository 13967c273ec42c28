"""Corpora in the formats users keep: globs of text, gzip, JSONL and Parquet shards, a
``datasets`` dataset saved to disk or streamed from the Hub; leading and seeded shares
capped by lines or bytes; the seeded subset they draw; one-line errors for bad input."""

from __future__ import annotations

import gzip
import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import datasets
import jsonschema
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import REPO, write_lines
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from tokstudy.corpora.prepare import CleaningStats, clean_lines, prepare_corpus
from tokstudy.corpora.sources import CorpusSource
from tokstudy.corpora.subset import CHUNK, SeededSubset
from tokstudy.errors import TokstudyError
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
DOCUMENTS = ["first line\nsecond line", "third", "  \n fourth  ", "fifth\r\nsixth"]
#: the cleaned lines of DOCUMENTS
LINES = ["first line", "second line", "third", "fourth", "fifth", "sixth"]


def _prepare(source: CorpusSource | list[Path], out: Path, **settings: Any) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    options = {"label": "xx", "heldout": 1, "seed": 7, **settings}
    return prepare_corpus(
        source, out / "train.txt", out / "heldout.txt", out / "stats.json", **options
    )


def _written(out: Path) -> list[str]:
    return [
        line
        for name in ("train.txt", "heldout.txt")
        for line in (out / name).read_text(encoding="utf-8").splitlines()
    ]


def _write_jsonl(path: Path, records: list[dict[str, Any]], packed: bool = False) -> Path:
    text = "".join(json.dumps(record) + "\n" for record in records).encode()
    path.write_bytes(gzip.compress(text) if packed else text)
    return path


def _write_parquet(path: Path, columns: dict[str, list[Any]], row_group_size: int = 2) -> Path:
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return path


# --- the formats -------------------------------------------------------------------------


def test_jsonl_shards_plain_and_gzip_give_each_documents_lines(tmp_path: Path) -> None:
    first = _write_jsonl(
        tmp_path / "a.jsonl", [{"text": d, "id": i} for i, d in enumerate(DOCUMENTS[:2])]
    )
    second = _write_jsonl(
        tmp_path / "b.jsonl.gz", [{"text": d} for d in DOCUMENTS[2:]], packed=True
    )
    stats = CleaningStats()
    source = CorpusSource(files=(first, second), format="jsonl")
    assert list(clean_lines(source, "xx", "error", stats)) == LINES
    assert [(s.shard, s.records_read, s.read_to_end) for s in stats.shards] == [
        (str(first), 2, True),
        (str(second), 2, True),
    ]
    assert stats.shards[0].bytes_read == len("first line\nsecond line") + len("third")


def test_a_parquet_column_read_in_batches_with_nulls_counted_as_empty(tmp_path: Path) -> None:
    path = _write_parquet(
        tmp_path / "part.parquet", {"content": [*DOCUMENTS, None], "n": list(range(5))}
    )
    stats = CleaningStats()
    source = CorpusSource(files=(path,), format="parquet", field="content")
    assert list(clean_lines(source, "xx", "error", stats)) == LINES
    assert stats.shards[0].records_read == 5 and stats.empty_dropped == 2  # "  " and None


def test_a_dataset_saved_to_disk_and_a_split_of_a_dataset_dict(tmp_path: Path) -> None:
    table = {"text": DOCUMENTS, "lang": ["xx"] * 4}
    datasets.Dataset.from_dict(table).save_to_disk(str(tmp_path / "one"))
    both = datasets.DatasetDict(
        train=datasets.Dataset.from_dict(table),
        test=datasets.Dataset.from_dict({"text": ["other"], "lang": ["xx"]}),
    )
    both.save_to_disk(str(tmp_path / "dict"))
    one = CorpusSource(dataset={"disk": str(tmp_path / "one")})
    assert list(clean_lines(one, "xx", "error", CleaningStats())) == LINES
    test = CorpusSource(dataset={"disk": str(tmp_path / "dict"), "split": "test"})
    assert list(clean_lines(test, "xx", "error", CleaningStats())) == ["other"]
    with pytest.raises(
        TokstudyError, match=r"dict: a DatasetDict; give its split \(one of test, train\)"
    ):
        list(
            clean_lines(
                CorpusSource(dataset={"disk": str(tmp_path / "dict")}),
                "xx",
                "error",
                CleaningStats(),
            )
        )


def test_a_hub_dataset_is_streamed_with_load_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []

    def streamed(name: str, config: str | None, *, split: str, streaming: bool) -> Any:
        calls.append((name, config, split, streaming))  # the network's stand-in: local rows
        return datasets.Dataset.from_dict({"text": DOCUMENTS}).to_iterable_dataset()

    monkeypatch.setattr(datasets, "load_dataset", streamed)
    source = CorpusSource(dataset={"hub": "org/web", "config": "fin", "split": "train"})
    stats = CleaningStats()
    assert list(clean_lines(source, "xx", "error", stats)) == LINES
    assert calls == [("org/web", "fin", "train", True)]
    assert stats.shards[0].shard == "hub dataset org/web (fin) split train"


# --- what is taken ----------------------------------------------------------------------


def _numbered(tmp_path: Path, count: int) -> Path:
    return write_lines(tmp_path / "raw.txt", [f"line {i}" for i in range(count)])


def test_a_leading_share_stops_at_the_byte_cap_and_records_what_it_read(tmp_path: Path) -> None:
    raw = _numbered(tmp_path, 100)
    sizes = np.cumsum([len(f"line {i}\n") for i in range(100)])
    cap = int(sizes[29]) + 3  # 30 lines fit, the 31st does not
    summary = _prepare([raw], tmp_path / "out", max_bytes=cap, heldout=5)
    assert sorted(_written(tmp_path / "out"), key=lambda s: int(s.split()[1])) == [
        f"line {i}" for i in range(30)
    ]
    assert summary["lines_used"] == 30 and summary["bytes_used"] == sizes[29] <= cap
    assert summary["cleaned_lines_read"] == 30 and not summary["shards"][0]["read_to_end"]
    assert (summary["take"], summary["max_bytes"], summary["heldout_lines"]) == ("leading", cap, 5)
    both = _prepare([raw], tmp_path / "both", max_bytes=cap, max_lines=12, heldout=2)
    assert both["lines_used"] == 12  # the tighter cap


def test_a_seeded_share_is_a_seeded_sample_in_corpus_order(tmp_path: Path) -> None:
    raw = _numbered(tmp_path, 200)
    summary = _prepare([raw], tmp_path / "a", take="seeded", max_lines=50, heldout=10)
    taken = sorted(_written(tmp_path / "a"), key=lambda s: int(s.split()[1]))
    assert len(taken) == len(set(taken)) == 50 == summary["lines_used"]
    assert taken != [f"line {i}" for i in range(50)]  # not the leading 50
    assert summary["cleaned_lines_read"] == 200 and summary["shards"][0]["read_to_end"]
    train = (tmp_path / "a" / "train.txt").read_text().splitlines()
    assert train == sorted(train, key=lambda s: int(s.split()[1]))  # corpus order
    _prepare([raw], tmp_path / "b", take="seeded", max_lines=50, heldout=10)
    for name in ("train.txt", "heldout.txt", "stats.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    _prepare([raw], tmp_path / "c", take="seeded", max_lines=50, heldout=10, seed=8)
    assert sorted(_written(tmp_path / "c")) != sorted(taken)


def test_a_seeded_byte_cap_takes_the_lines_it_holds_at_the_mean_line_length(tmp_path: Path) -> None:
    raw = write_lines(tmp_path / "raw.txt", [f"{i:04d}" for i in range(1000)])  # 5 bytes each
    summary = _prepare([raw], tmp_path / "out", take="seeded", max_bytes=1234, heldout=3)
    assert summary["lines_used"] == 1000 * 1234 // 5000 == 246
    assert summary["bytes_used"] == 246 * 5


def test_the_heldout_split_of_the_same_source_is_the_same_for_every_reader(tmp_path: Path) -> None:
    lines = [f"sentence {i}" for i in range(300)]
    text = write_lines(tmp_path / "raw.txt", lines)
    jsonl = _write_jsonl(tmp_path / "raw.jsonl", [{"text": line} for line in lines])
    _prepare([text], tmp_path / "text", heldout=0.1)
    _prepare(CorpusSource(files=(jsonl,), format="jsonl"), tmp_path / "jsonl", heldout=0.1)
    for name in ("train.txt", "heldout.txt"):
        assert (tmp_path / "text" / name).read_bytes() == (tmp_path / "jsonl" / name).read_bytes()


# --- the seeded subset -----------------------------------------------------------------


@given(st.integers(0, 3 * CHUNK), st.data(), st.integers(0, 2**32 - 1))
def test_a_seeded_subset_has_exactly_its_count_in_range_and_repeats(total, data, seed) -> None:
    count = data.draw(st.integers(0, total))
    drawn = list(SeededSubset(total, count, seed).indices())
    assert len(drawn) == len(set(drawn)) == count and all(0 <= i < total for i in drawn)
    assert drawn == sorted(drawn) == list(SeededSubset(total, count, seed).indices())
    members = list(SeededSubset(total, count, seed))
    assert len(members) == total and np.flatnonzero(members).tolist() == drawn


def test_every_subset_is_equally_likely() -> None:
    draws = Counter(tuple(SeededSubset(6, 2, seed).indices()) for seed in range(3000))
    assert set(draws) == set(itertools.combinations(range(6), 2))  # all 15 subsets
    assert scipy_stats.chisquare(list(draws.values())).pvalue > 0.01  # seeds 0..2999: fixed


def test_across_chunks_each_index_is_a_member_as_often() -> None:
    total = CHUNK + CHUNK // 2  # the second chunk is smaller: its share must follow
    hits = np.zeros(total)
    for seed in range(200):
        hits[list(SeededSubset(total, total // 10, seed).indices())] += 1
    first, second = hits[:CHUNK].mean(), hits[CHUNK:].mean()
    assert first == pytest.approx(20, rel=0.02) and second == pytest.approx(20, rel=0.02)


# --- the workflow: globs, datasets, settings ------------------------------------------


def _config(tmp_path: Path, entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "results_dir": str(tmp_path / "res"),
        "languages": {"xx": entry},
        "tokenizers": {"char": None},
        "metrics": ["mu"],
    }


def test_a_glob_of_parquet_shards_is_planned_in_order_with_its_reader(tmp_path: Path) -> None:
    for name in ("b", "a", "c"):
        _write_parquet(tmp_path / f"{name}.parquet", {"body": [name]})
    entry = {"path": str(tmp_path / "*.parquet"), "file_format": "parquet", "field": "body"}
    jsonschema.validate(_config(tmp_path, entry), SCHEMA)
    plan = StudyPlan(Study(_config(tmp_path, entry)))
    shards = plan.corpora.source_files("xx")
    assert shards == [tmp_path / f"{name}.parquet" for name in "abc"]
    settings = plan.corpora.settings("xx")
    assert settings["source"] == {"format": "parquet", "field": "body", "dataset": None}
    assert (settings["take"], settings["max_bytes"]) == ("leading", None)
    source = CorpusSource(files=tuple(shards), **settings["source"])
    assert list(clean_lines(source, "xx", "error", CleaningStats())) == ["a", "b", "c"]


def test_a_saved_dataset_is_planned_with_its_files(tmp_path: Path) -> None:
    datasets.Dataset.from_dict({"text": DOCUMENTS}).save_to_disk(str(tmp_path / "saved"))
    entry = {"dataset": {"disk": str(tmp_path / "saved")}}
    jsonschema.validate(_config(tmp_path, entry), SCHEMA)
    plan = StudyPlan(Study(_config(tmp_path, entry)))
    files = plan.corpora.source_files("xx")
    assert tmp_path / "saved" / "state.json" in files and all(f.is_file() for f in files)
    assert plan.corpora.settings("xx")["source"]["dataset"] == {"disk": str(tmp_path / "saved")}
    hub = {"dataset": {"hub": "org/web", "split": "train"}}
    assert StudyPlan(Study(_config(tmp_path, hub))).corpora.source_files("xx") == []


@pytest.mark.parametrize(
    "dataset", [{"hub": "org/web"}, {"disk": "a", "hub": "b", "split": "c"}, {"split": "train"}]
)
def test_the_schema_takes_a_saved_or_a_hub_dataset_with_its_split(
    tmp_path: Path, dataset: dict[str, str]
) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_config(tmp_path, {"dataset": dataset}), SCHEMA)


# --- bad input: one line naming the file or key, nothing written ----------------------


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"path": "nothing/*.jsonl"},
            r"config key languages\.xx\.path: no file matches '.*nothing/\*\.jsonl'",
        ),
        (
            {"dataset": {"disk": "."}},
            r"config key languages\.xx\.dataset\.disk: .* is not a dataset saved",
        ),
        (
            {"chatterbot": "english", "file_format": "jsonl"},
            r"languages\.xx\.file_format: 'jsonl' does not apply to a chatterbot source",
        ),
    ],
)
def test_bad_sources_stop_the_plan_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: dict[str, Any], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TokstudyError, match=message):
        StudyPlan(Study(_config(tmp_path, entry)))


def _bad_shards(tmp_path: Path) -> dict[str, tuple[CorpusSource, str]]:
    good = write_lines(tmp_path / "good.txt", ["fine", "also fine"])
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("café\n".encode("latin-1"))
    not_json = tmp_path / "notjson.jsonl"
    not_json.write_text('{"text": "ok"}\nplain text\n', encoding="utf-8")
    no_field = _write_jsonl(tmp_path / "nofield.jsonl", [{"text": "ok"}, {"body": "x"}])
    not_text = _write_jsonl(tmp_path / "number.jsonl", [{"text": 3}])
    parquet = _write_parquet(tmp_path / "other.parquet", {"body": ["x"], "id": [1]})
    numbers = _write_parquet(tmp_path / "numbers.parquet", {"text": [1, 2]})
    not_dataset = tmp_path / "empty"
    not_dataset.mkdir()
    return {
        "mixed encodings": (
            CorpusSource(files=(good, latin)),
            r"'xx': .*latin1\.txt: invalid UTF-8 at line 1",
        ),
        "not JSON": (
            CorpusSource(files=(not_json,), format="jsonl"),
            r"notjson\.jsonl: line 2 is not a JSON object \(declared format jsonl\)",
        ),
        "no field": (
            CorpusSource(files=(no_field,), format="jsonl"),
            r"nofield\.jsonl: line 2 has no field 'text'",
        ),
        "not text": (
            CorpusSource(files=(not_text,), format="jsonl"),
            r"number\.jsonl: line 1: field 'text' is int, not text",
        ),
        "no column": (
            CorpusSource(files=(parquet,), format="parquet"),
            r"other\.parquet: no column 'text' \(columns: body, id\)",
        ),
        "column not text": (
            CorpusSource(files=(numbers,), format="parquet"),
            r"numbers\.parquet: column 'text' is int64, not text",
        ),
        "text as parquet": (
            CorpusSource(files=(good,), format="parquet"),
            r"good\.txt: not a Parquet file \(declared format parquet\)",
        ),
        "parquet as text": (
            CorpusSource(files=(parquet,)),
            r"other\.parquet: a Parquet file, not text \(set format: parquet\)",
        ),
        "not a dataset": (
            CorpusSource(dataset={"disk": str(not_dataset)}),
            r"empty: not a saved datasets dataset",
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "mixed encodings",
        "not JSON",
        "no field",
        "not text",
        "no column",
        "column not text",
        "text as parquet",
        "parquet as text",
        "not a dataset",
    ],
)
def test_bad_input_is_one_line_naming_the_shard_and_nothing_is_written(
    tmp_path: Path, case: str
) -> None:
    source, message = _bad_shards(tmp_path)[case]
    with pytest.raises(TokstudyError, match=message) as caught:
        _prepare(source, tmp_path / "out")
    assert "\n" not in str(caught.value) and str(caught.value).startswith("corpus of language 'xx'")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == []


def test_a_failure_while_writing_removes_what_was_written(tmp_path: Path) -> None:
    raw = _numbered(tmp_path, 20)
    out = tmp_path / "out"
    out.mkdir()
    (out / "stats.json").mkdir()  # the last file cannot be written
    with pytest.raises(IsADirectoryError):
        prepare_corpus(
            [raw],
            out / "train.txt",
            out / "heldout.txt",
            out / "stats.json",
            label="xx",
            heldout=2,
            seed=1,
        )
    assert not (out / "train.txt").exists() and not (out / "heldout.txt").exists()
