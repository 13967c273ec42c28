"""Robustness of segmentation (tokstudy.analyses.robustness): perturbations whose effect
is computed by hand on a character tokenizer, the perturbations themselves, a bad name,
the step on files and a dry run."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from tokenizers import Regex, models, pre_tokenizers
from tokenizers import Tokenizer as HFTokenizer
from workflow_support import snakemake

from tokstudy.analyses.robustness.measure import perturb_all, robustness_rows
from tokstudy.analyses.robustness.perturbations import (
    NBSP,
    PERTURBATIONS,
    ZWSP,
    Perturber,
    fullwidth,
    math_bold,
    strip_diacritics,
)
from tokstudy.analyses.robustness.tables import write_robustness
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.pretrained import PretrainedHF, import_pretrained
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

CHARS = ["[UNK]", " ", *"abcdef"]


def char_json() -> HFTokenizer:
    """One token per character; a character outside ``a``-``f`` and space is [UNK]."""
    tokenizer = HFTokenizer(
        models.WordLevel({t: i for i, t in enumerate(CHARS)}, unk_token="[UNK]")
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    return tokenizer


@pytest.mark.parametrize(
    ("name", "inflation", "changed"),
    [
        ("zero_width", 3 / 8, 1.0),  # one U+200B (one token) inside each of the 3 words
        ("typo_drop", -3 / 8, 1.0),  # each 2-letter word loses a letter: 8 -> 5 tokens
        ("typo_insert", 3 / 8, 1.0),
        ("nbsp", 0.0, 2 / 3),  # same count; words 2 and 3 follow an [UNK] separator
        ("uppercase", 0.0, 1.0),  # every letter becomes [UNK]: same count, new ids
        ("strip_diacritics", 0.0, 0.0),  # nothing to strip
    ],
)
def test_perturbation_effects_computed_by_hand(name: str, inflation: float, changed: float) -> None:
    perturbed = perturb_all(["ab cd ef"], [name], seed=1, rate=1.0)
    [row] = robustness_rows(PretrainedHF(char_json()), ["ab cd ef"], perturbed)
    assert (row["tokens_clean"], row["words"]) == (8, 3)
    assert row["inflation"] == pytest.approx(inflation)
    assert row["changed_words"] == pytest.approx(changed)


def test_typo_swap_of_two_letter_words_swaps_them() -> None:
    words, separator = Perturber(["ab cd"], seed=0, rate=1.0).perturb("typo_swap", 0, "ab cd")
    assert (words, separator) == (["ba", "dc"], " ")


def test_every_word_perturbations_by_hand() -> None:
    assert strip_diacritics("déjà Ärger") == "deja Arger"
    assert fullwidth("A1! é") == "\uff21\uff11\uff01 é"
    assert math_bold("Ab9-") == "\U0001d400\U0001d41b\U0001d7d7-"
    perturber = Perturber(["x yz"], seed=3, rate=0.5)
    assert perturber.perturb("nbsp", 0, "x yz") == (["x", "yz"], NBSP)
    words, _ = perturber.perturb("zero_width", 0, "x yz")  # only yz has an inside
    assert words == ["x", f"y{ZWSP}z"]
    assert perturber.perturb("homoglyphs", 0, "x yz")[0] in (["\u0445", "yz"], ["x", "\u0443z"])


def test_perturbations_are_seeded() -> None:
    text = ["abc def abc fed cab"]
    for name in PERTURBATIONS:
        first = Perturber(text, 5, 0.4).perturb(name, 0, text[0])
        assert first == Perturber(text, 5, 0.4).perturb(name, 0, text[0])


def _plan(tmp_path: Path, robustness: dict) -> StudyPlan:
    config = {
        "languages": {"en": {"chatterbot": "english"}},
        "tokenizers": {"char": {}},
        "metrics": ["mu"],
        "results_dir": "out",
        "analyses": {"robustness": robustness},
    }
    return StudyPlan(Study(config, tmp_path))


def test_an_unknown_perturbation_is_one_line_with_the_valid_names(tmp_path: Path) -> None:
    with pytest.raises(
        TokstudyError,
        match=r"^config key analyses\.robustness\.perturbations: no perturbation 'typo' "
        r"\(valid: typo_swap, typo_drop, .*, zero_width\)$",
    ):
        _plan(tmp_path, {"perturbations": ["typo_swap", "typo"]})
    plan = _plan(tmp_path, {"perturbations": ["nbsp"]}).analyses["robustness"]
    assert plan.heldout_files() == {"en": "out/corpora/en/heldout.txt"}
    assert [e.label for e in plan.tokenizers_scored()] == ["char"]


def test_write_robustness_on_files(tmp_path: Path) -> None:
    source = tmp_path / "tokenizer.json"
    char_json().save(str(source))
    import_pretrained("chars", {}, source, tmp_path / "chars")
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("ab cd ef\n\nfa\n", encoding="utf-8")
    outputs = [tmp_path / "r.csv", tmp_path / "r.md"]
    write_robustness(
        {},
        {"xx": heldout},
        [
            {
                "label": "chars",
                "kind": "pretrained",
                "directory": str(tmp_path / "chars"),
                "languages": ["xx"],
            }
        ],
        ["uppercase", "zero_width"],
        {"seed": 1, "rate": 1.0, "sentences": 5},
        *outputs,
    )
    table = pd.read_csv(outputs[0])
    assert table[["perturbation", "sentences", "words", "tokens_clean"]].values.tolist() == [
        ["uppercase", 2, 4, 10],
        ["zero_width", 2, 4, 10],
    ]
    assert table["inflation"].tolist() == pytest.approx([0.0, 4 / 10])


@pytest.mark.slow
def test_dry_run_plans_the_robustness_rules(tmp_path: Path) -> None:
    config = tmp_path / "study.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "languages": {"en": {"chatterbot": "english"}},
                "tokenizers": {"char": {}},
                "metrics": ["mu"],
                "analyses": {"robustness": {"sentences": 5}},
            }
        )
    )
    result = snakemake(tmp_path, "-n", config=config)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "rule robustness:" in result.stdout and "rule plot_robustness_heatmap:" in result.stdout
