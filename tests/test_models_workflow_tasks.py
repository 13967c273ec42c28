"""The model stage in the workflow on real labels: UD sentence task, a TSV dataset, CharacterBERT.

One tiny run on Marathi (HFT corpus; UD Marathi-UFAL for POS and the past-tense sentence
task) with ``sp_unigram`` and a CharacterBERT; then, in a copy, the same study with a user
TSV sentence dataset (Marathi UD sentences labelled by verbal aspect), which reruns only
the sentence fine-tuning.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import SHARED
from test_models_workflow import TINY_TRAINING
from workflow_support import snakemake

from tokstudy.models.ud_sentences import UDSentence, feature_labels, has_feature, ud_splits

pytestmark = [pytest.mark.slow, pytest.mark.shared]


TOKENIZER, SIZE = "sp_unigram", 300
CHARACTERBERT, WORDS = "characterbert", 400
MODELS = (CHARACTERBERT, TOKENIZER)
TREEBANK = SHARED / "ud" / "UD_Marathi-UFAL"
TSV = {"train": "data/train.tsv", "test": "data/test.tsv"}


def aspect(sentence: UDSentence) -> str:
    """A real 3-class label: perfective or imperfective verbal aspect, else other."""
    for label, feature in (("perfective", "Aspect=Perf"), ("imperfective", "Aspect=Imp")):
        if has_feature(sentence, feature):
            return label
    return "other"


def write_tsv_dataset(workdir: Path, test_header: str = "text\tlabel") -> None:
    """TSV files (header, then text and label) of the treebank's train and test sentences."""
    splits = ud_splits(TREEBANK)
    for split, name in TSV.items():
        path = workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        header = test_header if split == "test" else "text\tlabel"
        rows = [header] + [f"{s.text}\t{aspect(s)}" for s in splits[split]]
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def study_config(workdir: Path, **models: object) -> Path:
    """A Marathi study with a tiny models section (1 seed, 6 steps)."""
    config = {
        "seed": 3,
        "data_root": str(SHARED / "corpora" / "hft2022"),
        "corpus_defaults": {"heldout": 0.1, "max_lines": 1500},
        "languages": {"mr": {}},
        "vocab_sizes": [SIZE],
        "tokenizers": {TOKENIZER: {}},
        "metrics": ["mu"],
        "models": {
            "languages": ["mr"],
            "tokenizers": [TOKENIZER],
            "vocab_sizes": [SIZE],
            "seeds": [0],
            "tasks": ["mlm", "noise", "pos", "sentence"],
            "ud_root": str(TREEBANK.parent),
            "treebanks": {"mr": TREEBANK.name},
            "characterbert": {
                "word_vocab_size": WORDS,
                "max_word_chars": 12,
                "char_embedding_dim": 8,
                "filters": [[1, 16], [2, 16], [3, 32]],
                "highway_layers": 1,
            },
            **TINY_TRAINING,
            **models,
        },
    }
    path = workdir / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def run_dir(workdir: Path, tokenizer: str) -> Path:
    size = WORDS if tokenizer == CHARACTERBERT else SIZE
    return workdir / f"results/models/runs/mr/{tokenizer}/{size}/seed0"


def results_table(workdir: Path) -> pd.DataFrame:
    return pd.read_csv(workdir / "results/tables/models/results.tsv", sep="\t")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("model_tasks")
    result = snakemake(workdir, "--cores", "2", config=study_config(workdir))
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir


@pytest.fixture(scope="module")
def tsv_workdir(workdir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the finished run, rerun with ``sentence_tsv`` for Marathi."""
    copy = tmp_path_factory.mktemp("model_tasks_tsv") / "run"
    shutil.copytree(workdir, copy, symlinks=True)
    write_tsv_dataset(copy)
    config = study_config(copy, sentence_tsv={"mr": TSV})
    result = snakemake(copy, "--cores", "2", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "rule finetune_model:" in result.stderr
    assert "rule pretrain_mlm:" not in result.stderr  # the pretrained models are kept
    return copy


@pytest.mark.parametrize("tokenizer", MODELS)
def test_ud_sentence_task_has_real_labels_and_macro_f1(workdir: Path, tokenizer: str) -> None:
    folder = run_dir(workdir, tokenizer) / "sentence"
    summary = json.loads((folder / "finetune.json").read_text())
    assert summary["labels"] == ["no", "yes"] and Path(summary["source"]) == TREEBANK
    gold = pd.read_csv(folder / "predictions.tsv", sep="\t").query("level == 0")["gold"]
    expected = [label for _, label in feature_labels(ud_splits(TREEBANK)["test"], "Tense=Past")]
    assert gold.tolist() == expected and set(gold) == {"no", "yes"}
    results = results_table(workdir)
    rows = results.query("task == 'sentence' and tokenizer == @tokenizer")
    assert set(rows["level"]) == {0, 20}
    assert set(rows["metric"]) == {"accuracy", "macro_f1", "majority_accuracy", "collapsed"}
    assert rows["value"].between(0, 1).all()
    # the majority class of the test set, by hand from its gold labels
    majority = rows.query("level == 0 and metric == 'majority_accuracy'")["value"].item()
    assert majority == pytest.approx(gold.value_counts().max() / len(gold))


def test_characterbert_is_pretrained_and_evaluated(workdir: Path) -> None:
    pretrain = run_dir(workdir, CHARACTERBERT) / "pretrain"
    assert pd.read_csv(pretrain / "train_log.csv")["step"].max() == 6
    summary = json.loads((pretrain / "pretrain.json").read_text())
    assert summary["architecture"] == CHARACTERBERT and summary["word_vocab_size"] == WORDS
    assert summary["charbert"]["filters"] == [[1, 16], [2, 16], [3, 32]]
    results = results_table(workdir)
    rows = results[results["tokenizer"] == CHARACTERBERT]
    assert set(rows["vocab_size"]) == {WORDS}
    assert set(rows["task"]) == {"mlm", "pos", "sentence"}
    mlm = rows[rows["task"] == "mlm"].set_index(["level", "metric"])["value"]
    assert mlm[(0, "bits_per_char")] > 0 and mlm[(0, "pll_per_word")] < 0
    assert mlm[(20, "pseudo_perplexity")] > 1
    assert rows.query("task == 'pos'")["value"].between(0, 1).all()


def test_summary_tables_have_a_row_per_task_and_model(workdir: Path) -> None:
    tables = workdir / "results/tables/models"
    summary = pd.read_csv(tables / "seed_summary.tsv", sep="\t")
    cells = set(zip(summary["task"], summary["tokenizer"], strict=True))
    assert cells == {(task, model) for task in ("mlm", "pos", "sentence") for model in MODELS}
    bootstrap = pd.read_csv(tables / "bootstrap.tsv", sep="\t")
    assert len(bootstrap[bootstrap["task"] == "sentence"]) == 2 * 2 * 2  # models, levels, metrics
    assert "| sentence" in (tables / "seed_summary.md").read_text()


def test_tsv_sentence_task_uses_the_user_labels(tsv_workdir: Path) -> None:
    test_labels = [aspect(s) for s in ud_splits(TREEBANK)["test"]]
    for tokenizer in MODELS:
        folder = run_dir(tsv_workdir, tokenizer) / "sentence"
        summary = json.loads((folder / "finetune.json").read_text())
        assert summary["source"] == {split: str(Path(name)) for split, name in TSV.items()}
        assert summary["labels"] == ["imperfective", "other", "perfective"]
        assert summary["sizes"]["test"] == len(test_labels)
        gold = pd.read_csv(folder / "predictions.tsv", sep="\t").query("level == 0")["gold"]
        assert gold.tolist() == test_labels
    results = results_table(tsv_workdir)
    macro_f1 = results.query("task == 'sentence' and metric == 'macro_f1'")
    assert len(macro_f1) == 2 * 2 and macro_f1["value"].between(0, 1).all()


def test_tsv_label_missing_from_train_fails_naming_the_file(
    tsv_workdir: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(tsv_workdir, copy, symlinks=True)
    (copy / TSV["test"]).write_text("text\tlabel\nएक वाक्य\tmaybe\n", encoding="utf-8")
    target = run_dir(copy, TOKENIZER).relative_to(copy) / "sentence/metrics.tsv"
    result = snakemake(copy, "--cores", "1", str(target), config=copy / "study.yaml")
    output = result.stdout + result.stderr
    message = f"error: {TSV['test']}: label(s) not in the training data: maybe"
    assert result.returncode != 0
    assert message in output, output[-2000:]


@pytest.mark.parametrize(
    ("test_header", "models", "message"),
    [
        (
            "text\ttense",
            {"sentence_tsv": {"mr": TSV}},
            f"{TSV['test']}: missing column(s) label in the header (found: text, tense)",
        ),
        (
            "text\tlabel",
            {"sentence_tsv": {"mr": {"train": TSV["train"], "test": "data/none.tsv"}}},
            "config key models.sentence_tsv.mr.test: no file data/none.tsv",
        ),
        (
            "text\tlabel",
            {"sentence_tsv": {"mr": TSV, "xx": TSV}},
            "config key models.sentence_tsv.xx: not in models.languages",
        ),
        (
            "text\tlabel",
            {"characterbert": {"top_words": 5}},
            "models.characterbert: unknown key(s) top_words",
        ),
    ],
)
def test_bad_tsv_or_characterbert_config_fails_at_start(
    tmp_path: Path, test_header: str, models: dict, message: str
) -> None:
    write_tsv_dataset(tmp_path, test_header)
    result = snakemake(tmp_path, "-n", config=study_config(tmp_path, **models))
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert message in output, output[-2000:]
