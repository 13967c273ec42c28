"""Estimate the study page's size and build time for config/llm_tokenizers.yaml without
running that study (docs/study-page.md, "Cost").

    python scripts/study_page_cost.py [--shared ../shared] [--out /tmp/page-cost]

The page of that study is built from stand-ins of the same shape: its 18 HFT-2022
languages (the first 500 lines of each corpus as held-out text, 500 as in the study), its
five pretrained tokenizers (the same ``tokenizer.json`` files, with frequency tables of
their vocabulary size), and for the 2 × 2 trained cells per language two tokenizers
trained here at 8,000 on English (``sp_unigram`` and ``hf_bytelevel_bpe`` for ``bbpe``),
each standing in at both sizes; a metrics table of the study's row count. It prints
what :func:`build_study_page` measured: bytes and seconds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from itertools import islice
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from tokstudy.report.page.build import PageCell, build_study_page
from tokstudy.report.page.recommend import StudyTables
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.tokenizers.external import load_any

REPO = Path(__file__).resolve().parents[1]
STAND_INS = {"sp_unigram": "sp_unigram", "bbpe": "hf_bytelevel_bpe"}
TRAIN_LINES = 20_000
HELDOUT_LINES = 500


def head(path: Path, count: int) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in islice(handle, count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    parser.add_argument("--out", type=Path, default=Path("/tmp/study-page-cost"))
    args = parser.parse_args()
    study = yaml.safe_load((REPO / "config" / "llm_tokenizers.yaml").read_text())
    out, corpora = args.out, args.shared / "corpora" / "hft2022"
    out.mkdir(parents=True, exist_ok=True)
    languages = sorted(study["languages"])
    train = out / "train_en.txt"
    train.write_text("\n".join(head(corpora / "en.txt.gz", TRAIN_LINES)) + "\n", encoding="utf-8")
    trained = {}
    for name, adapter in STAND_INS.items():
        directory = out / "tokenizers" / name
        if not (directory / "meta.json").is_file():
            train_to_directory(adapter, train, TrainSpec(8000, label="en"), directory)
        trained[name] = directory
    pretrained = {}
    for name, entry in study["pretrained"].items():
        source = (REPO / entry["path"]).resolve()
        frequencies = out / "frequencies" / f"{name}.tsv"
        if not frequencies.is_file():
            size = len(load_any(source).vocab)
            frequencies.parent.mkdir(parents=True, exist_ok=True)
            counts = np.random.default_rng(0).integers(0, 10_000, size)
            pd.DataFrame({"id": np.arange(size), "train_frequency": counts}).to_csv(
                frequencies, sep="\t", index=False
            )
        pretrained[name] = (source, frequencies)
    heldout, cells, rows = {}, [], []
    for language in languages:
        heldout[language] = out / "corpora" / f"{language}.txt"
        heldout[language].parent.mkdir(parents=True, exist_ok=True)
        lines = head(corpora / f"{language}.txt.gz", HELDOUT_LINES)
        heldout[language].write_text("\n".join(lines) + "\n", encoding="utf-8")
        for name, directory in trained.items():
            for size in map(str, study["vocab_sizes"]):
                cells.append(PageCell(language, name, size, "trained", directory, None))
        for name, (source, frequencies) in pretrained.items():
            cells.append(PageCell(language, name, "pretrained", "pretrained", source, frequencies))
    for cell in cells:
        for split in ("train", "heldout"):
            size = 8000 if cell.kind == "trained" else 100_000
            rows += [
                (cell.language, cell.tokenizer, size, split, metric, 1.0, cell.kind)
                for metric in study["metrics"]
            ]
    columns = ["language", "tokenizer", "vocab_size", "split", "metric", "value", "kind"]
    pd.DataFrame(rows, columns=columns).to_csv(out / "metrics.csv", index=False)
    words = study["analyses"]["segmentation"]["words"]
    recommendations = {language: out / f"recommendation_{language}.csv" for language in languages}
    started = time.perf_counter()
    figures = build_study_page(
        cells,
        heldout,
        words,
        {},
        StudyTables.read(out / "metrics.csv", {}),
        [],
        out / "index.html",
        recommendations,
        seed=study["seed"],
    )
    figures["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps({k: v for k, v in figures.items() if k != "notes"}))


if __name__ == "__main__":
    main()
