"""The study page's library: sample lines, token display, the Pareto panel, the page
build on bad input, and ``tokstudy serve`` over HTTP (the browser tests are in
``test_study_page_browser.py``)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from page_support import LANGUAGES, build_tiny_page, tiny_study

from tokstudy.figures.palette import SPARE_COLOURS, tokenizer_colour
from tokstudy.report.page.build import PageCell, render
from tokstudy.report.page.recommend import Criterion, StudyTables, pareto, recommendation
from tokstudy.report.page.segments import (
    BYTES,
    TEXT,
    Frequencies,
    base_direction,
    sample_lines,
    segment_cell,
    text_notes,
)
from tokstudy.report.page.serve import MAX_BODY, Playground, PlaygroundServer
from tokstudy.tokenizers.registry import ADAPTERS, load_tokenizer


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[PageCell]]:
    root = tmp_path_factory.mktemp("results")
    cells = tiny_study(root)
    build_tiny_page(root, cells)
    return root, cells


def island(page: Path) -> dict:
    """The JSON data island of a built page."""
    text = page.read_text(encoding="utf-8")
    start = text.index('id="study-data">') + len('id="study-data">')
    return json.loads(text[start : text.index("</script>", start)])


# --- sample lines and how tokens are shown


def test_base_direction_follows_the_first_strong_character() -> None:
    assert base_direction("سلام hello") == "rtl"
    assert base_direction("hello سلام") == "ltr"
    assert base_direction("שלום") == "rtl"
    assert base_direction("123 ?!") == "auto"


def test_text_notes_name_what_renders_unexpectedly() -> None:
    assert text_notes("plain text") == []
    notes = text_notes("e\u0301 \U0001f600 a\u0007 سلام")
    assert any("mixed directions" in n for n in notes)
    assert any("control" in n for n in notes)
    assert any("combining" in n for n in notes)
    assert any("emoji" in n for n in notes)


def test_sample_lines_are_seeded_and_carry_the_words(tmp_path: Path) -> None:
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("".join(f"line {i}\n" for i in range(100)), encoding="utf-8")
    first = sample_lines(heldout, 5, seed=7, words=["w1", "w1", " ", "w2"])
    again = sample_lines(heldout, 5, seed=7, words=["w1", "w2"])
    other = sample_lines(heldout, 5, seed=8)
    texts = [line.text for line in first.lines]
    assert texts == [line.text for line in again.lines]
    assert texts[-2:] == ["w1", "w2"] and len(texts) == 7
    drawn = [int(text.split()[1]) for text in texts[:5]]
    assert drawn == sorted(drawn) and len(set(drawn)) == 5  # file order, no repeats
    assert [line.text for line in other.lines] != texts[:5]
    assert [line.source for line in first.lines] == ["heldout"] * 5 + ["word"] * 2


def test_a_language_without_heldout_lines_gets_a_note(tmp_path: Path) -> None:
    empty = tmp_path / "heldout.txt"
    empty.write_text("\n\n", encoding="utf-8")
    sample = sample_lines(empty, 5, seed=1, words=["word"])
    assert [line.text for line in sample.lines] == ["word"]
    assert "no held-out lines" in sample.notes[0]
    long = tmp_path / "long.txt"
    long.write_text("x" * 1000 + "\n", encoding="utf-8")
    cut = sample_lines(long, 5, seed=1)
    assert len(cut.lines[0].text) == 400 and "cut to 400" in cut.notes[0]


def test_byte_level_tokens_read_as_text_or_hex_spell_the_line(
    study: tuple[Path, list[PageCell]],
) -> None:
    """Oracle: the UTF-8 bytes of the line, rebuilt from what the viewer shows."""
    _, cells = study
    cell = next(c for c in cells if c.language == "fa" and c.tokenizer == "hf_bytelevel_bpe")
    tokenizer = load_tokenizer(cell.directory)
    lines = ["سلام، حال شما چطور است؟", "کامپیوتر 😀"]
    data = segment_cell(tokenizer, lines, Frequencies(cell.frequencies))
    kinds = set()
    for line, ids in zip(lines, data["lines"], strict=True):
        rebuilt = b""
        for token_id in ids:
            display, kind, _ = data["tokens"][str(token_id)]
            kinds.add(kind)
            rebuilt += bytes.fromhex(display) if kind == BYTES else display.encode("utf-8")
        assert rebuilt.replace("▁".encode(), b" ") == line.encode("utf-8")
    assert kinds == {TEXT, BYTES}  # a 300-token byte-level vocabulary splits Persian letters
    counts = pd.read_csv(cell.frequencies, sep="\t").set_index("id")["train_frequency"]
    for token_id, (_, _, frequency) in data["tokens"].items():
        assert frequency == counts[int(token_id)]


def test_a_token_that_cannot_be_decoded_becomes_a_note(
    study: tuple[Path, list[PageCell]],
) -> None:
    _, cells = study
    tokenizer = load_tokenizer(cells[0].directory)

    class Broken(type(tokenizer)):  # type: ignore[misc]
        def decode(self, ids: list[int]) -> str:
            raise ValueError("no such byte")

    tokenizer.__class__ = Broken
    data = segment_cell(tokenizer, ["hello world"], Frequencies(None))
    assert data["lines"] == [tokenizer.encode("hello world")]
    decoding = [note for note in data["notes"] if "cannot be decoded" in note]
    assert len(decoding) == 1 and "(ValueError: no such byte)" in decoding[0]
    assert any("no frequency table" in note for note in data["notes"])


def test_unknown_and_special_tokens_are_marked(study: tuple[Path, list[PageCell]]) -> None:
    _, cells = study
    cell = next(c for c in cells if c.language == "en" and c.tokenizer == "hf_bpe")
    tokenizer = load_tokenizer(cell.directory)
    data = segment_cell(tokenizer, ["hello 漢"], Frequencies(cell.frequencies))
    unk = str(tokenizer.unk_id)
    assert unk in data["tokens"] and data["tokens"][unk][1] == "unk"


# --- palette


def test_each_adapter_has_its_own_colour_and_pretrained_names_a_stable_one() -> None:
    colours = [tokenizer_colour(name) for name in ADAPTERS]
    assert len(set(colours)) == len(ADAPTERS)
    assert tokenizer_colour("gpt_4o") == tokenizer_colour("gpt_4o") in SPARE_COLOURS
    assert not set(SPARE_COLOURS) & set(colours)
    assert tokenizer_colour("sp_bpe") == "#1f77b4"  # its own, whatever else a study has
    assert tokenizer_colour("gpt_4o") not in colours


# --- which tokenizer: the Pareto front


def test_pareto_on_a_hand_computed_case() -> None:
    frame = pd.DataFrame(
        {
            "tokenizer": ["a", "b", "c", "d"],
            "size": ["1", "1", "1", "pretrained"],
            "kind": ["trained"] * 3 + ["pretrained"],
            "fertility": [1.0, 2.0, 1.5, 1.2],
            "speed": [1.0, 3.0, 0.5, np.nan],
        }
    )
    criteria = [Criterion("fertility", "fertility", "lower"), Criterion("speed", "speed", "higher")]
    result = pareto(frame, criteria)
    assert result["pareto"].tolist() == [True, True, False, False]
    assert result["why"][2] == "dominated by a 1: fertility 1 vs 1.5, speed 1 vs 0.5"
    assert result["why"][3] == "not placed: not measured: speed"
    alone = pareto(frame, criteria[:1])
    assert alone["pareto"].tolist() == [True, False, False, False]


@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=8
    ),
    st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_pareto_keeps_exactly_the_undominated_cells(
    points: list[tuple[int, int, int]], lower: list[bool]
) -> None:
    """Oracle: a cell is on the front iff no other cell beats it somewhere and loses nowhere,
    checked pair by pair on the raw values."""
    names = ["x", "y", "z"]
    frame = pd.DataFrame(points, columns=names).assign(
        tokenizer=[f"t{i}" for i in range(len(points))], size="1", kind="trained"
    )
    criteria = [
        Criterion(n, n, "lower" if low else "higher") for n, low in zip(names, lower, strict=True)
    ]

    def beats(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
        at_least = all((p <= q) if low else (p >= q) for p, q, low in zip(a, b, lower, strict=True))
        return at_least and a != b

    expected = [not any(beats(other, point) for other in points) for point in points]
    assert pareto(frame, criteria)["pareto"].tolist() == expected


def test_recommendation_reads_the_study_tables(
    study: tuple[Path, list[PageCell]], tmp_path: Path
) -> None:
    root, _ = study
    cost = pd.DataFrame(
        {
            "language": ["fa"] * 4,
            "tokenizer": ["hf_bpe", "hf_bpe", "char", "char"],
            "size": ["300", "300", "full", "full"],
            "step": ["train", "metrics", "train", "metrics"],
            "seconds": [2.0, 1.0, 0.5, 1.0],
            "encode_mb_s": [np.nan, 3.0, np.nan, 9.0],
        }
    )
    cost.to_csv(tmp_path / "cost.csv", index=False)
    parity = pd.DataFrame(
        {"tokenizer": ["hf_bpe 300", "char", "gpt_4o"], "language": "fa", "premium": [1.2, 1.5, 2]}
    )
    parity.to_csv(tmp_path / "parity.csv", index=False)
    morphology = pd.DataFrame(  # the criterion: the share above chance, words in context
        {"language": ["fa", "fa", "en"], "tokenizer": "hf_bpe", "vocab_size": 300}
        | {"encoding": ["alone", "in_context", "in_context"]}
        | {"aligned_share_types": [0.7, 0.8, 0.9], "corrected_types": [0.1, 0.4, 0.9]}
    )
    morphology.to_csv(tmp_path / "morphology.csv", index=False)
    given = {"cost": "cost.csv", "parity": "parity.csv", "morphology": "morphology.csv"}
    tables = StudyTables.read(
        root / "tables" / "metrics.csv",
        {key: tmp_path / name for key, name in given.items()} | {"downstream": None},
    )
    assert tables.downstream is None
    data, table = recommendation(tables, "fa")
    names = [c["name"] for c in data["criteria"]]
    assert names == [
        "fertility",
        "bytes_per_token",
        "premium",
        "morphological_alignment",
        "train_seconds",
        "encode_mb_s",
    ]
    rows = table.set_index("tokenizer")
    assert (rows.loc["char", "train_seconds"], rows.loc["char", "encode_mb_s"]) == (0.5, 9.0)
    assert (rows.loc["hf_bpe", "premium"], rows.loc["char", "premium"]) == (1.2, 1.5)
    assert np.isnan(rows.loc["hf_bytelevel_bpe", "premium"])
    assert rows["morphological_alignment"].fillna(-1).tolist() == [-1, 0.4, -1, -1]  # char, hf_bpe…
    assert "not measured" in table.set_index("tokenizer").loc["hf_bytelevel_bpe", "why"]
    metrics = pd.read_csv(root / "tables" / "metrics.csv")
    fertility = metrics.query("language == 'fa' and split == 'heldout' and metric == 'fertility'")
    assert sorted(table["fertility"]) == sorted(fertility["value"])


# --- the page


def test_the_page_holds_its_data_and_the_recommendation_tables(
    study: tuple[Path, list[PageCell]],
) -> None:
    root, cells = study
    data = island(root / "index.html")
    assert data["languages"] == sorted(LANGUAGES)
    assert [c["key"] for c in data["cells"]] == [c.key for c in cells]
    fa = data["samples"]["fa"]["lines"]
    assert fa[0]["dir"] == "rtl" and fa[-1] == {
        "text": "کامپیوتر",
        "source": "word",
        "dir": "rtl",
        "notes": [],
    }
    for cell, shown in zip(cells, data["cells"], strict=True):
        tokenizer = load_tokenizer(cell.directory)
        texts = [line["text"] for line in data["samples"][cell.language]["lines"]]
        assert shown["lines"] == tokenizer.encode_batch(texts)
    for language in LANGUAGES:
        table = pd.read_csv(root / "tables" / f"recommendation_{language}.csv")
        assert set(table["tokenizer"]) == {"hf_bpe", "hf_bytelevel_bpe", "char", "hf_wordpiece"}
        assert table["pareto"].any() and (table["language"] == language).all()
    assert "no pretrained tokenizers" in data["notes"]
    assert "no downstream scores" in data["notes"][1]


def test_a_broken_tokenizer_is_a_note_not_a_crash(
    study: tuple[Path, list[PageCell]], tmp_path: Path
) -> None:
    root, cells = study
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "meta.json").write_text("{not json", encoding="utf-8")
    cells = [*cells, PageCell("en", "sp_bpe", "300", "trained", broken, None)]
    out = tmp_path / "page"
    out.mkdir()
    (out / "corpora").symlink_to(root / "corpora")
    shutil.copytree(root / "tables", out / "tables")
    page = build_tiny_page(out, cells)
    shown = island(page)["cells"][-1]
    assert shown["lines"] is None and shown["notes"][0].startswith("cannot segment:")


def test_render_escapes_the_end_of_the_script() -> None:
    page = render({"title": "</script><script>alert(1)</script>"})
    assert "</script><script>alert" not in page
    assert page.count("</script>") == 2  # the island's and the code's


# --- tokstudy serve


@pytest.fixture(scope="module")
def server(study: tuple[Path, list[PageCell]]) -> Iterator[str]:
    root, _ = study
    httpd = PlaygroundServer(("127.0.0.1", 0), Playground(root))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_serve_segments_typed_text_with_every_named_cell(
    server: str, study: tuple[Path, list[PageCell]]
) -> None:
    _, cells = study
    keys = [c.key for c in cells if c.language == "fa"]
    text = "سلام دنیا\n\nhello 😀 e\u0301"
    status, answer = post(
        f"{server}/api/segment", json.dumps({"text": text, "cells": keys}).encode()
    )
    assert status == 200
    lines = answer["sample"]["lines"]
    assert [line["dir"] for line in lines] == ["rtl", "ltr"]
    assert any("emoji" in note for note in lines[1]["notes"])
    for cell, shown in zip([c for c in cells if c.language == "fa"], answer["cells"], strict=True):
        tokenizer = load_tokenizer(cell.directory)
        assert shown["lines"] == tokenizer.encode_batch(["سلام دنیا", "hello 😀 e\u0301"])
    with urllib.request.urlopen(f"{server}/", timeout=30) as response:
        assert b"tokstudy serve" in response.read()


@pytest.mark.parametrize(
    ("path", "body", "status", "message"),
    [
        ("/api/segment", b'{"text": "x", "cells": ["en|gpt_9|pretrained"]}', 404, "no tokenizer"),
        ("/api/segment", b'{"text": "\xff\xfe"}', 400, "not UTF-8"),
        ("/api/segment", b"[1, 2", 400, "not JSON"),
        ("/api/segment", b'{"cells": []}', 400, "expected"),
        ("/api/segment", b"x" * (MAX_BODY + 1), 413, "over the limit"),
        ("/elsewhere", b"{}", 404, "no endpoint"),
    ],
)
def test_serve_answers_bad_requests_with_one_error_and_stays_up(
    server: str, path: str, body: bytes, status: int, message: str
) -> None:
    assert post(f"{server}{path}", body)[0:1] == (status,)
    assert message in post(f"{server}{path}", body)[1]["error"]
    assert post(f"{server}/api/segment", b'{"text": "ok", "cells": []}')[0] == 200


def test_serve_reads_no_file_outside_the_results_folder(server: str) -> None:
    for path in ("/study/..%2F..%2Fetc%2Fpasswd", "/study/%2e%2e/x", "/etc/passwd"):
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(f"{server}{path}", timeout=30)
        assert error.value.code == 404
    with urllib.request.urlopen(f"{server}/study/tables/metrics.csv", timeout=30) as response:
        assert response.read().startswith(b"language,tokenizer")


def test_serve_prints_its_address_and_stops_on_ctrl_c(
    study: tuple[Path, list[PageCell]],
) -> None:
    root, _ = study
    process = subprocess.Popen(
        [sys.executable, "-m", "tokstudy.cli", "serve", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as in a terminal: a test run started in the background (`cmd &` in a
        # script) passes SIGINT on ignored, and Python then never raises KeyboardInterrupt
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("tokstudy serve: http://127.0.0.1:")
        address = line.split()[2]
        with urllib.request.urlopen(address, timeout=30) as response:
            assert response.status == 200
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0 and "stopped" in out


def test_serve_without_a_study_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tokstudy.cli import main

    assert main(["serve", str(tmp_path / "missing")]) == 1
    assert "no such results folder" in capsys.readouterr().err
    assert main(["serve", str(tmp_path)]) == 1
    assert "no tokenizers" in capsys.readouterr().err


def test_downstream_criteria_take_their_direction_from_the_task_registry() -> None:
    from tokstudy.report.page.recommend import StudyTables, recommendation_table

    cell = {"language": "xx", "split": "heldout", "kind": "trained", "metric": "fertility"}
    metrics = pd.DataFrame(
        [
            {**cell, "tokenizer": "sp_bpe", "vocab_size": 1000, "value": 1.5},
            {**cell, "tokenizer": "sp_bpe", "vocab_size": 2000, "value": 1.3},
        ]
    )
    run = {"language": "xx", "tokenizer": "sp_bpe", "task": "mlm", "level": 0}
    downstream = pd.DataFrame(
        [
            {**run, "vocab_size": size, "seed": seed, "metric": metric, "value": value}
            for size, seed, metric, value in [
                (1000, 0, "pll_per_word", -3.0),
                (1000, 1, "pll_per_word", -5.0),  # seed mean -4.0
                (2000, 0, "pll_per_word", -2.0),
                (1000, 0, "bits_per_char", 1.2),
                (2000, 0, "bits_per_char", 1.1),
            ]
        ]
    )
    table, criteria = recommendation_table(StudyTables(metrics, downstream=downstream), "xx")
    better = {criterion.name: criterion.better for criterion in criteria}
    # PLL per word is -NLL per word: higher is better; bits per character: lower
    assert better == {
        "fertility": "lower",
        "mlm_bits_per_char": "lower",
        "mlm_pll_per_word": "higher",
    }
    assert table["mlm_pll_per_word"].tolist() == [-4.0, -2.0]


def test_morphscore_and_robustness_are_criteria_read_by_label() -> None:
    from tokstudy.report.page.recommend import StudyTables, recommendation_table

    metrics = pd.DataFrame(
        [
            {
                "language": "xx",
                "split": "heldout",
                "metric": "fertility",
                "value": v,
                "tokenizer": t,
                "vocab_size": s,
                "kind": k,
            }
            for t, s, k, v in [("sp_bpe", 1000, "trained", 1.5), ("gpt_4o", 0, "pretrained", 2.0)]
        ]
    )
    morphscore = pd.DataFrame(  # the criterion: the corrected score of the words in context
        {
            "tokenizer": ["sp_bpe 1000", "sp_bpe 1000", "gpt_4o", "gpt_4o", "gpt_4o"],
            "language": ["xx", "xx", "xx", "xx", "yy"],
            "encoding": ["in_context", "alone", "alone", "in_context", "in_context"],
            "morphscore": [0.9, 0.9, 0.9, 0.9, 0.9],
            "morphscore_corrected": [0.25, -0.5, 0.6, 0.75, 0.1],
        }
    )
    robustness = pd.DataFrame(  # mean over perturbations and sources: 0.2 and 0.5
        {
            "tokenizer": ["sp_bpe 1000", "sp_bpe 1000", "gpt_4o"],
            "language": "xx",
            "inflation": [0.1, 0.3, 0.5],
        }
    )
    tables = StudyTables(metrics, morphscore=morphscore, robustness=robustness)
    table, criteria = recommendation_table(tables, "xx")
    assert {c.name: c.better for c in criteria} == {
        "fertility": "lower",
        "morphscore": "higher",
        "noise_inflation": "lower",
    }
    rows = table.set_index("tokenizer")
    assert rows.loc["sp_bpe", "morphscore"] == 0.25 and rows.loc["gpt_4o", "morphscore"] == 0.75
    assert rows["noise_inflation"].to_dict() == pytest.approx({"gpt_4o": 0.5, "sp_bpe": 0.2})
