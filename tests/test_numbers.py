"""How tokenizers cut numbers (tokstudy.analyses.numbers): tokenizers whose digit
behaviour is known by construction (3-digit chunks from the left, from the right, single
digits), the generated numbers, numbers found in text, and a dry run."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Regex, models, pre_tokenizers
from tokenizers import Tokenizer as HFTokenizer
from workflow_support import snakemake

from tokstudy.analyses.numbers.digits import (
    MAX_DIGITS,
    digit_cuts,
    generated_numbers,
    groupings,
    number_table,
    numbers_in,
    summarise,
)
from tokstudy.tokenizers.pretrained import PretrainedHF

#: every string of 1-3 digits, the separators and [UNK]: a WordLevel vocabulary
VOCAB = ["[UNK]", ",", ".", *(f"{n:0{w}d}" for w in (1, 2, 3) for n in range(10**w))]
LEFT = r"\d{1,3}"  # 1234567 -> 123|456|7
RIGHT = r"\d{1,3}(?=(?:\d{3})*(?!\d))"  # 1234567 -> 1|234|567
SINGLE = r"\d"


def regex_tokenizer(pattern: str) -> PretrainedHF:
    """A WordLevel tokenizer whose digit chunks are the matches of ``pattern``."""
    tokenizer = HFTokenizer(
        models.WordLevel({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]")
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    return PretrainedHF(tokenizer)


@pytest.mark.parametrize(
    ("pattern", "direction", "tokens"),
    [
        (LEFT, "left-to-right", lambda n: math.ceil(n / 3)),
        (RIGHT, "right-to-left", lambda n: math.ceil(n / 3)),
        (SINGLE, "single digits", lambda n: n),
    ],
)
def test_known_digit_behaviour_is_found(pattern: str, direction: str, tokens) -> None:
    numbers = generated_numbers(seed=3, per_length=4)
    table = number_table(regex_tokenizer(pattern), [(n, form) for n, form in numbers])
    plain = table[table["source"] == "plain"]
    summary = summarise(plain)
    assert summary["direction"] == direction
    assert summary["tokens_per_number"] == pytest.approx(
        sum(tokens(n) for n in range(1, MAX_DIGITS + 1)) / MAX_DIGITS
    )
    # runs of 4+ digits: 9 lengths (4..12), 4 numbers each; 3 of them multiples of 3
    assert summary["runs_of_4_plus"] == 36
    expected = {"left-to-right": (12 / 36, 1.0), "right-to-left": (1.0, 12 / 36)}
    right, left = expected.get(direction, (0.0, 0.0))
    assert (summary["share_right3"], summary["share_left3"]) == pytest.approx((right, left))
    assert summary["share_single_digits"] == (1.0 if direction == "single digits" else 0.0)
    separated = table[table["source"] == "separated"]  # 1,234,567: each group and comma
    assert separated["tokens"].tolist() == [
        sum(tokens(len(group)) for group in n.split(",")) + n.count(",")
        for n in separated["number"]
    ]
    # over the integer's digits, the commas cut every number in 3s from the right
    grouped = summarise(separated)
    assert grouped["runs_of_4_plus"] == 36
    assert grouped["direction"] == ("single digits" if pattern == SINGLE else "right-to-left")
    # a decimal's integer part is cut as the plain integer
    decimal = summarise(table[table["source"] == "decimal"])
    assert decimal["runs_of_4_plus"] == 36 and decimal["direction"] == direction


def test_a_separated_number_is_grouped_right_by_a_left_chunking_regex() -> None:
    # \d{1,3} chunks from the left, but the commas already cut 1|,|234|,|567
    tokenizer = regex_tokenizer(LEFT)
    assert tokenizer.tokenize("1,234,567") == ["1", ",", "234", ",", "567"]
    table = number_table(tokenizer, [("1,234,567", "x"), ("1,234.56", "x"), ("1234567", "x")])
    assert table["digits"].tolist() == [7, 4, 7]  # the integer's digits, commas removed
    assert table["right3"].tolist() == [True, True, False]  # 1|234|567, 1|234 ; 123|456|7
    assert table["left3"].tolist() == [False, False, True]


def test_cuts_are_counted_in_integer_digits_by_hand() -> None:
    # 1|,|234|,|567: written offsets 1, 2, 5, 6 are after 1, 1, 4, 4 digits
    assert digit_cuts("1,234,567", [1, 2, 5, 6]) == (7, frozenset({1, 4}))
    # the cut at the point (offset 7) and in the decimals (9) are not inside the integer
    assert digit_cuts("1234567.08", [3, 6, 7, 9]) == (7, frozenset({3, 6}))
    assert digit_cuts("12,345.6", [2, 3]) == (5, frozenset({2}))


@given(st.integers(10**3, 10**12 - 1), st.data())
def test_separators_do_not_move_the_digit_cuts(value: int, data) -> None:
    """Round trip: cuts placed between digits of the plain integer, carried onto the
    separated number as written (before or after a comma), read back the same."""
    plain, written = str(value), f"{value:,}"
    cuts = data.draw(st.frozensets(st.integers(1, len(plain) - 1)))
    offsets = [i for i, character in enumerate(written) if character.isdigit()]
    placed = []
    for cut in cuts:  # the offset just after the cut-th digit, or after a comma that follows
        after = offsets[cut - 1] + 1
        comma = written[after : after + 1] == ","
        placed.append(after + (comma and data.draw(st.booleans())))
    assert digit_cuts(written, placed) == (len(plain), cuts)
    assert digit_cuts(f"{written}.5", [*placed, len(written), len(written) + 1]) == (
        len(plain),
        cuts,
    )


def test_the_cuts_of_one_number_by_hand() -> None:
    table = number_table(regex_tokenizer(LEFT), [("1234567", "x"), ("12345.5", "x")])
    assert table["tokens"].tolist() == [3, 4]  # 123|456|7 ; 123|45|.|5
    assert table["left3"].tolist() == [True, True] and table["right3"].tolist() == [False, False]
    assert groupings(7) == (frozenset({4, 1}), frozenset({3, 6}))


def test_generated_numbers_are_seeded_and_well_formed() -> None:
    numbers = generated_numbers(seed=7, per_length=5)
    assert numbers == generated_numbers(seed=7, per_length=5) != generated_numbers(8, 5)
    assert len(numbers) == 12 * 5 * 3
    plain = [n for n, form in numbers if form == "plain"]
    assert sorted({len(n) for n in plain}) == list(range(1, 13))
    for (value, _), (separated, _), (decimal, _) in zip(*[iter(numbers)] * 3, strict=True):
        assert separated == f"{int(value):,}" and decimal.split(".")[0] == value


@given(st.integers(min_value=0, max_value=10**12 - 1))
def test_numbers_in_text_find_separated_and_plain_numbers(value: int) -> None:
    text = f"In {value:,} cases, 3.5 of 12 rose by {value}."
    assert list(numbers_in([text])) == [f"{value:,}", "3.5", "12", str(value)]


@pytest.mark.slow
def test_dry_run_plans_the_numbers_rules(tmp_path: Path) -> None:
    config = tmp_path / "study.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "languages": {"en": {"chatterbot": "english"}},
                "tokenizers": {"char": {}},
                "metrics": ["mu"],
                "analyses": {"numbers": {"per_length": 2}},
            }
        )
    )
    result = snakemake(tmp_path, "-n", config=config)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "rule number_tokens:" in result.stdout and "rule plot_number_tokens:" in result.stdout


def test_numbers_planner_labels_trained_cells_and_checks_its_folders(tmp_path: Path) -> None:
    from tokstudy.errors import TokstudyError
    from tokstudy.workflow.plan import StudyPlan
    from tokstudy.workflow.study.core import Study

    def plan(numbers: dict) -> StudyPlan:
        config = {
            "languages": {"en": {"chatterbot": "english"}},
            "tokenizers": {"char": {}, "sp_bpe": {"vocab_sizes": [100]}},
            "metrics": ["mu"],
            "results_dir": "out",
            "analyses": {"numbers": numbers},
        }
        return StudyPlan(Study(config, tmp_path))

    numbers = plan({}).analyses["numbers"]
    assert [e["label"] for e in numbers.tokenizers_scored()] == ["char (en)", "sp_bpe 100 (en)"]
    assert numbers.settings["per_length"] == 50  # the default
    assert numbers.pud_files() == [] and numbers.udhr_files() == []
    with pytest.raises(TokstudyError, match=r"^config key analyses\.numbers\.udhr_root: no folder"):
        plan({"udhr_root": "nowhere"})
