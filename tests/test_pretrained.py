"""Pretrained tokenizers: formats, import, checks, the study's cells, tables and plots."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import SHARED, write_lines
from figures import capture_figures, lines_of
from matplotlib.image import imread
from workflow_support import snakemake

from tokstudy.analyses.multilingual.tables import write_multilingual_tables
from tokstudy.errors import TokstudyError
from tokstudy.metrics.compute import compute_metrics, tokens_per_word
from tokstudy.report import plots
from tokstudy.report.plots import plot_metric
from tokstudy.report.tables import kind_comparison, tidy_rows, wide
from tokstudy.tokenizers.adapters.bytelevel import HFByteLevelBPE
from tokstudy.tokenizers.adapters.sentencepiece import MODEL_FILE, SentencePieceUnigram
from tokstudy.tokenizers.base import TokenStarts, TrainSpec
from tokstudy.tokenizers.cells import PRETRAINED, Cell
from tokstudy.tokenizers.external import load_any
from tokstudy.tokenizers.pretrained import (
    HOLE,
    PretrainedHF,
    PretrainedSentencePiece,
    PretrainedTiktoken,
    detect_format,
    import_pretrained,
    load_source,
)
from tokstudy.tokenizers.registry import PRETRAINED_FORMATS, load_tokenizer
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

pytestmark = pytest.mark.shared

SCHEMA = yaml.safe_load(
    (Path(__file__).parents[1] / "workflow/schemas/config.schema.yaml").read_text()
)
GPT_4O = SHARED / "pretrained" / "gpt-4o" / "tokenizer.json"
GPT_4O_SHA256 = "43a3ad4618a6a938f8c2614154ea10c31ad53a62d5683ae0b0e6133575cef07e"
TEXT = ["the man said that he said it", "she said the word", "we said so, said he"]


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One small real file of each format, made with the libraries that read them."""
    folder = tmp_path_factory.mktemp("sources")
    corpus = write_lines(folder / "train.txt", TEXT * 30)
    bytelevel = HFByteLevelBPE.train(corpus, TrainSpec(300, size_policy="adjust"))
    bytelevel.save(folder)  # tokenizer.json
    unigram = SentencePieceUnigram.train(corpus, TrainSpec(40, size_policy="adjust"))
    unigram.save(folder)
    (folder / MODEL_FILE).rename(folder / "small.model")
    ranks = [bytes([b]) for b in range(256)] + [b" s", b"ai", b" sai", b" said"]
    (folder / "small.tiktoken").write_text(
        "".join(f"{base64.b64encode(t).decode()} {r}\n" for r, t in enumerate(ranks))
    )
    return {
        "tokenizer_json": folder / "tokenizer.json",
        "sentencepiece": folder / "small.model",
        "tiktoken": folder / "small.tiktoken",
    }


@pytest.mark.parametrize("fmt", ["tokenizer_json", "sentencepiece", "tiktoken"])
def test_each_format_is_detected_and_encodes_losslessly(sources: dict[str, Path], fmt: str) -> None:
    detected, path = detect_format(sources[fmt])
    assert detected == fmt and path == sources[fmt]
    tokenizer = load_source(path, fmt, "r50k_base" if fmt == "tiktoken" else None)
    assert (
        type(tokenizer)
        is {
            "tokenizer_json": PretrainedHF,
            "sentencepiece": PretrainedSentencePiece,
            "tiktoken": PretrainedTiktoken,
        }[fmt]
    )
    for line in TEXT:
        encoded = tokenizer.encode_batch_with_offsets([line])[0]
        assert encoded.ids == tokenizer.encode(line)
        assert tokenizer.decode(encoded.ids) == line
        assert tokens_per_word([line], TokenStarts.from_encoded([encoded])).sum() == len(
            encoded.ids
        )
    batch = tokenizer.encode_batch_starts(TEXT)
    assert batch.ids.tolist() == [i for line in TEXT for i in tokenizer.encode(line)]
    assert tokens_per_word(TEXT, batch).sum() == len(batch.ids)


def test_tiktoken_merges_and_pattern_by_encoding_name(sources: dict[str, Path]) -> None:
    tokenizer = PretrainedTiktoken(sources["tiktoken"], pattern="r50k_base")
    ids = tokenizer.encode("we said")
    assert [tokenizer.readable_token(tokenizer.vocab[i]) for i in ids] == ["w", "e", "▁said"]
    with pytest.raises(
        TokstudyError, match=r"small\.tiktoken: tiktoken file with 260 ranks matches no"
    ):
        PretrainedTiktoken(sources["tiktoken"])


def test_a_folder_and_a_forced_format_load_a_tokenizer_json(
    sources: dict[str, Path], tmp_path: Path
) -> None:
    assert detect_format(sources["tokenizer_json"].parent)[0] == "tokenizer_json"
    renamed = tmp_path / "tokenizer.data"
    renamed.write_bytes(sources["tokenizer_json"].read_bytes())
    assert detect_format(renamed) == ("tokenizer_json", renamed)  # sniffed from "{"
    assert detect_format(renamed, "tokenizer_json")[0] == "tokenizer_json"


def test_the_schema_lists_the_registered_formats() -> None:
    entry = SCHEMA["properties"]["pretrained"]["additionalProperties"]["properties"]
    assert entry["format"]["enum"] == ["auto", *PRETRAINED_FORMATS]


class ToyFormat(PretrainedHF):
    """A format added through the registry alone: an HF tokenizer.json under another name."""

    name = "pretrained_toy"
    source_file = "toy.json"
    suffix = ".toy"


def test_a_registered_format_is_detected_imported_and_loaded(
    sources: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(PRETRAINED_FORMATS, "toy", f"{__name__}:ToyFormat")
    source = tmp_path / "small.toy"
    source.write_bytes(sources["tokenizer_json"].read_bytes())
    assert detect_format(source) == ("toy", source)
    import_pretrained("small", {}, source, tmp_path / "small")
    assert sorted(p.name for p in (tmp_path / "small").iterdir()) == [
        "meta.json",
        "toy.json",
        "vocab.tsv",
    ]
    loaded = load_tokenizer(tmp_path / "small")
    assert type(loaded) is ToyFormat
    assert loaded.encode(TEXT[0]) == load_any(sources["tokenizer_json"]).encode(TEXT[0])


def test_gpt_4o_holes_specials_and_readable_bytes() -> None:
    tokenizer = load_any(GPT_4O)
    assert isinstance(tokenizer, PretrainedHF)
    assert len(tokenizer.vocab) - tokenizer.vocab.count(HOLE) == 200_000
    ids = tokenizer.encode("<|endoftext|> said")
    assert not set(ids) & tokenizer.special_ids  # special-token text is text
    assert tokenizer.decode(ids) == "<|endoftext|> said"
    readable = [tokenizer.readable_token(tokenizer.vocab[i]) for i in tokenizer.encode(" मराठी")]
    assert "".join(readable).replace("▁", " ").startswith(" म")


def test_import_writes_a_pretrained_directory(sources: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "pretrained" / "small"
    import_pretrained("small", {"format": "auto"}, sources["tiktoken"].parent, target)
    meta = json.loads((target / "meta.json").read_text())
    assert meta["kind"] == "pretrained" and meta["format"] == "tokenizer_json"
    tokenizer = load_tokenizer(target)
    assert meta["vocab_size"] == len(tokenizer.vocab)
    assert len((target / "vocab.tsv").read_text().splitlines()) == len(tokenizer.vocab)
    assert sorted(p.name for p in target.parent.iterdir()) == ["small"]  # no staging left


def test_pretrained_metrics_count_no_special_tokens(tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "c.txt", ["the man said it", "<|endoftext|>"])
    tokenizer = load_any(GPT_4O)
    metrics, _ = compute_metrics(tokenizer, corpus)
    expected = sum(len(tokenizer.encode(line)) for line in ["the man said it", "<|endoftext|>"])
    assert metrics["tokens"] == expected
    assert metrics["fertility"] == pytest.approx(expected / 5)


# --- bad input: one line each, nothing half-written -------------------------------------


def test_a_file_of_neither_format_is_one_line_error(tmp_path: Path) -> None:
    odd = tmp_path / "vocab.bin"
    odd.write_bytes(b"\x00\x01 not a tokenizer")
    with pytest.raises(TokstudyError, match=r"vocab.bin: neither an HF tokenizer.json") as err:
        detect_format(odd)
    assert "\n" not in str(err.value)


def test_a_truncated_tokenizer_json_is_one_line_error(
    sources: dict[str, Path], tmp_path: Path
) -> None:
    broken = tmp_path / "tokenizer.json"
    broken.write_bytes(sources["tokenizer_json"].read_bytes()[:500])
    target = tmp_path / "out" / "broken"
    with pytest.raises(
        TokstudyError, match=r"tokenizer\.json: not a valid HF tokenizer\.json"
    ) as err:
        import_pretrained("broken", {}, broken, target)
    assert "\n" not in str(err.value)
    assert not target.exists()


def test_a_checksum_mismatch_is_one_line_error(sources: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "out" / "small"
    with pytest.raises(TokstudyError, match=r"pretrained.small: checksum mismatch .* expected 0+,"):
        import_pretrained("small", {"sha256": "0" * 64}, sources["sentencepiece"], target)
    assert not target.exists()


def _plan(tmp_path: Path, **pretrained: dict) -> StudyPlan:
    corpus = write_lines(tmp_path / "xx.txt", ["a b"])
    config = {
        "languages": {"xx": {"path": str(corpus)}, "yy": {"path": str(corpus)}},
        "vocab_sizes": [300],
        "tokenizers": {"sp_bpe": {}},
        "metrics": ["mu"],
        "results_dir": "res",
        "pretrained": pretrained,
    }
    return StudyPlan(Study(config))


def test_a_name_clashing_with_a_trained_tokenizer_is_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(TokstudyError, match=r"pretrained.sp_bpe: the name is also a trained"):
        _plan(tmp_path, sp_bpe={"path": str(GPT_4O)})


def test_study_cells_and_directories_of_pretrained_tokenizers(tmp_path: Path) -> None:
    plan = _plan(tmp_path, gpt_4o={"path": str(GPT_4O), "languages": ["yy"]})
    assert plan.tokenizers.scored_cells() == [
        Cell("xx", "sp_bpe", "300", 300),
        Cell("yy", "sp_bpe", "300", 300),
        Cell("yy", "gpt_4o", PRETRAINED, None),
    ]
    assert (
        plan.tokenizers.tokenizer_dir(Cell("yy", "gpt_4o", PRETRAINED, None))
        == "res/pretrained/gpt_4o"
    )
    assert (
        plan.tokenizers.tokenizer_dir(Cell("xx", "sp_bpe", "300", 300))
        == "res/tokenizers/xx/sp_bpe/300"
    )
    with pytest.raises(TokstudyError, match=r"pretrained\.hub_only: a hub download needs sha256"):
        _plan(tmp_path, hub_only={"hub": "org/model"})
    with pytest.raises(TokstudyError, match=r"pretrained\.Bad: a name is lower-case"):
        _plan(tmp_path, Bad={"path": str(GPT_4O)})


def _dry_run(tmp_path: Path, entry: dict) -> str:
    corpus = write_lines(tmp_path / "xx.txt", ["a b c", "b c d"] * 20)
    config = {
        "languages": {"xx": {"path": str(corpus)}},
        "vocab_sizes": [30],
        "tokenizers": {"char": {}},
        "metrics": ["mu"],
        "pretrained": {"llm": entry},
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config))
    result = snakemake(tmp_path, "-n", "--cores", "1", config=path)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_the_hub_download_rule_runs_only_for_hub_without_path(tmp_path: Path) -> None:
    sha = GPT_4O_SHA256
    hub_plan = _dry_run(tmp_path, {"hub": "openai/gpt-4o", "sha256": sha})
    assert "rule download_pretrained" in hub_plan and "rule import_pretrained" in hub_plan
    assert "results/downloads/pretrained/llm/tokenizer.json" in hub_plan
    local_plan = _dry_run(tmp_path, {"hub": "openai/gpt-4o", "path": str(GPT_4O), "sha256": sha})
    assert "download_pretrained" not in local_plan and "rule import_pretrained" in local_plan


def test_wide_tables_and_plots_show_pretrained_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = capture_figures(monkeypatch, plots)
    table = pd.concat(
        [
            tidy_rows("en", "sp_bpe", 250, "train", {"fertility": 1.5}),
            tidy_rows("en", "sp_bpe", 8000, "train", {"fertility": 1.2}),
            tidy_rows("en", "char", 60, "train", {"fertility": 4.0}),
            tidy_rows("en", "gpt_4o", 200000, "train", {"fertility": 1.3}, "pretrained"),
        ]
    )
    frame = wide(table, "fertility", "train")
    assert list(frame.columns) == [
        "language",
        "kind",
        "tokenizer",
        "250",
        "8000",
        "full",
        "pretrained",
    ]
    assert frame["tokenizer"].tolist() == ["char", "sp_bpe", "gpt_4o (200000)"]
    assert frame["kind"].tolist() == ["trained", "trained", "pretrained"]
    assert frame["pretrained"].iloc[2] == pytest.approx(1.3)
    outputs = [tmp_path / "fertility.png"]
    plot_metric(table, "fertility", "train", outputs)
    # the trained sizes on one axis (char a lone marker), gpt_4o in a side panel of its own
    (figure,) = figures
    trained, pretrained = figure.axes
    assert lines_of(trained) == {"char": ([60], [4.0]), "sp_bpe": ([250, 8000], [1.5, 1.2])}
    assert [line.get_linestyle() for line in trained.get_lines()] == ["None", "-"]
    assert [list(points.get_offsets()[:, 1]) for points in pretrained.collections] == [[1.3]]
    assert [t.get_text() for t in pretrained.get_xticklabels()] == ["gpt_4o\n200k"]
    assert (trained.get_title(), figure.get_suptitle()) == ("en", "fertility (train)")
    # one panel, 1.4 times as wide for the side panel: 4.2 * 1.4 x 3.4 inches at 120 dpi,
    # pixels truncated (705.6 -> 705)
    assert imread(outputs[0]).shape[:2] == (int(3.4 * 120), int(4.2 * 1.4 * 120))


def test_kind_comparison_puts_pretrained_first_and_names_the_best() -> None:
    table = pd.concat(
        [
            tidy_rows("en", "sp_unigram", 32000, "heldout", {"fertility": 1.1}),
            tidy_rows("en", "sp_unigram", 8000, "heldout", {"fertility": 1.3}),
            tidy_rows("en", "gpt_4o", 200000, "heldout", {"fertility": 1.2}, "pretrained"),
            tidy_rows("hi", "sp_unigram", 8000, "heldout", {"fertility": 1.4}),
            tidy_rows("hi", "gpt_4o", 200000, "heldout", {"fertility": 2.5}, "pretrained"),
        ]
    )
    frame = kind_comparison(table, "fertility", "heldout")
    assert list(frame.columns) == [
        "language",
        "gpt_4o",
        "sp_unigram 8000",
        "sp_unigram 32000",
        "best pretrained",
        "best trained",
    ]
    assert frame["best trained"].tolist() == ["sp_unigram 32000", "sp_unigram 8000"]
    assert frame["gpt_4o"].tolist() == [1.2, 2.5]


def test_pretrained_tokenizers_join_the_multilingual_tables(
    sources: dict[str, Path], tmp_path: Path
) -> None:
    study = Study(
        {
            "languages": {
                "xx": {"path": str(write_lines(tmp_path / "xx.txt", ["a b"]))},
                "yy": {"path": str(write_lines(tmp_path / "yy.txt", ["c d"]))},
            },
            "vocab_sizes": [300],
            "tokenizers": {"sp_bpe": {}},
            "metrics": ["mu"],
            "pretrained": {
                "every": {"path": str(GPT_4O)},
                "one": {"path": str(GPT_4O), "languages": ["xx"]},
            },
            "analyses": {"multilingual": {"tokenizers": ["sp_bpe"], "vocab_sizes": [300]}},
        }
    )
    comparisons = StudyPlan(study).analyses["multilingual"].comparisons()
    assert comparisons == [Cell("xx+yy", "every", PRETRAINED, None)]  # not "one"
    directory = tmp_path / "pretrained" / "small"
    import_pretrained("small", {}, sources["tiktoken"].parent, directory)
    texts = {lang: write_lines(tmp_path / f"{lang}.txt", TEXT) for lang in ("xx", "yy")}
    mix = tmp_path / "mix.csv"
    mix.write_text("language,sampled_lines\nxx,3\nyy,1\n")
    outputs = {
        name: tmp_path / f"{name}.{name.rsplit('_', 1)[1].replace('markdown', 'md')}"
        for name in ("share_csv", "share_markdown", "fertility_csv", "fertility_markdown")
    }
    write_multilingual_tables({("small", PRETRAINED): directory}, texts, texts, mix, outputs)
    fertility = pd.read_csv(outputs["fertility_csv"])
    assert set(fertility["kind"]) == {"pretrained"} and set(fertility["language"]) == {"xx", "yy"}
    assert (fertility["vocab_size"] == len(load_tokenizer(directory).vocab)).all()
