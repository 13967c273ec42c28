"""Compare tokstudy's MorphScore with MorphScore's own code and data
(github.com/catherinearnett/morphscore, Arnett & Bergen 2024; docs/world-analyses.md):

    git clone https://github.com/catherinearnett/morphscore /tmp/morphscore
    python scripts/morphscore_compare.py --morphscore /tmp/morphscore \
        --pretrained ../shared/pretrained \
        --ud-table results/llm_tokenizers/tables/analysis/morphscore.csv

For every pretrained tokenizer (a folder with ``tokenizer.json`` and
``tokenizer_config.json``) and every language that MorphScore's data and tokstudy's UD
treebanks share, three scores side by side:

- ``reference``: MorphScore's ``get_morphscore`` from the clone, given the tokenizer as
  its ``tokenizer.json`` defines it (``transformers.PreTrainedTokenizerFast``; their code
  reads ``morphscore/data/<language>_morph_data.csv`` from the working directory).
  Not ``AutoTokenizer``: transformers 5 rebuilds a folder whose config names
  ``GPT2Tokenizer`` with GPT-2's pre-tokenizer, which is not GPT-4o's;
- ``ours_their_items``: :func:`tokstudy.analyses.morphscore.items.score` on the same
  items (:func:`~tokstudy.analyses.morphscore.items.morphscore_items`), each word
  tokenized alone as MorphScore's code does: the difference from ``reference`` is the
  implementation;
- ``ours_ud``: the study's score on its UD items (``--ud-table``, its rows of the words
  tokenized alone): the difference from ``ours_their_items`` is the item set.

Their code and data are read from the clone and stay out of this repository. Prints a
Markdown table (and writes ``--csv`` when given), then per language Spearman's ρ between
the scores on the two item sets.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from tokstudy.analyses.morphology.spans import ALONE
from tokstudy.analyses.morphscore.items import morphscore_items, score
from tokstudy.tokenizers.pretrained import PretrainedHF

#: MorphScore's language name → the study's code, where ../shared/ud has a treebank
SHARED_LANGUAGES = {
    "english": "en",
    "icelandic": "is",
    "indonesian": "id",
    "irish": "ga",
    "japanese": "ja",
    "korean": "ko",
    "spanish": "es",
    "turkish": "tr",
}


def tokenizer_label(folder: Path) -> str:
    """The config key the study gives a pretrained folder (``llama-3.1`` → ``llama_3_1``)."""
    return folder.name.replace("-", "_").replace(".", "_")


def reference_scorer(clone: Path) -> Callable[[str, Path], float]:
    """MorphScore's own ``get_morphscore(language, tokenizer)``, loaded from ``clone``,
    as a function of (language, pretrained folder)."""
    from transformers import PreTrainedTokenizerFast

    spec = importlib.util.spec_from_file_location("morphscore_reference", clone / "morphscore.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    home = Path(tempfile.mkdtemp(prefix="morphscore-"))
    (home / "morphscore").symlink_to(clone.resolve(), target_is_directory=True)

    def reference(language: str, folder: Path) -> float:
        tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
        with contextlib.chdir(home):
            return float(module.get_morphscore(language, tokenizer))

    return reference


def compare(clone: Path, pretrained: Path, ud_table: Path | None) -> pd.DataFrame:
    """One row per (language, pretrained tokenizer): the three scores and the item counts."""
    reference = reference_scorer(clone)
    folders = sorted(p for p in pretrained.iterdir() if (p / "tokenizer.json").is_file())
    columns = ["tokenizer", "language", "encoding"]
    ud = pd.read_csv(ud_table) if ud_table else pd.DataFrame(columns=columns)
    ud = ud[ud["encoding"] == ALONE]
    rows = []
    for language, code in sorted(SHARED_LANGUAGES.items()):
        items = morphscore_items(clone / "data" / f"{language}_morph_data.csv")
        for folder in folders:
            label = tokenizer_label(folder)
            ours = score(items, PretrainedHF.from_source(folder / "tokenizer.json"), ALONE)
            match = ud[(ud["tokenizer"] == label) & (ud["language"] == code)]
            rows.append(
                {
                    "language": code,
                    "tokenizer": label,
                    "reference": reference(language, folder),
                    "ours_their_items": ours["morphscore"],
                    "ours_ud": float(match["morphscore"].iloc[0]) if len(match) else float("nan"),
                    "their_items": ours["items"],
                    "scored": ours["scored"],
                    "ud_items": int(match["items"].iloc[0]) if len(match) else 0,
                }
            )
            print(f"{code} {label}: {rows[-1]['reference']:.3f}", flush=True)
    return pd.DataFrame(rows)


def item_set_agreement(table: pd.DataFrame) -> pd.DataFrame:
    """Per language: Spearman's ρ between the tokenizers' scores on MorphScore's items and
    on the UD items (tokstudy's scoring on both), over the tokenizers that have both."""
    from scipy.stats import spearmanr

    rows = []
    for language, group in table.dropna(subset=["ours_ud"]).groupby("language"):
        rho = spearmanr(group["ours_their_items"], group["ours_ud"]).statistic
        rows.append({"language": language, "tokenizers": len(group), "spearman": rho})
    return pd.DataFrame(rows)


def main() -> None:
    """Parse the arguments, compare, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--morphscore", type=Path, required=True, help="a MorphScore clone")
    parser.add_argument("--pretrained", type=Path, required=True, help="tokenizer folders")
    parser.add_argument("--ud-table", type=Path, help="the study's morphscore.csv")
    parser.add_argument("--csv", type=Path, help="write the table here too")
    args = parser.parse_args()
    table = compare(args.morphscore, args.pretrained, args.ud_table)
    if args.csv:
        table.to_csv(args.csv, index=False, float_format="%.4f")
    print(table.to_markdown(index=False, floatfmt=".3f"))
    if args.ud_table:
        print("\nSpearman between the scores on their items and on the UD items:\n")
        print(item_set_agreement(table).to_markdown(index=False, floatfmt=".2f"))


if __name__ == "__main__":
    main()
