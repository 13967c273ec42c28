"""Held-out fertility of trained tokenizers: running text (tokstudy's definition) against
each word encoded alone (the definition before issue 14), side by side.

Prepares the corpus and trains as the workflow does (same split and seed as a study with
``heldout`` lines and ``seed``), so the figures are those of that study's cells:

    python scripts/fertility_definitions.py --language mr --tokenizers hf_bytelevel_bpe bbpe \
        --sizes 1000 3000 --heldout 1000 --seed 42
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from tokstudy.corpora.prepare import prepare_corpus
from tokstudy.files.lines import iter_lines
from tokstudy.metrics.compute import compute_metrics
from tokstudy.tokenizers.base import Tokenizer, TrainSpec
from tokstudy.tokenizers.registry import adapter_class

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "hft2022"


def words_alone(tokenizer: Tokenizer, heldout: Path) -> float:
    """Tokens per running word when every word type is encoded alone."""
    words = Counter(word for line in iter_lines(heldout) for word in line.split())
    tokens = sum(
        len(ids) * words[word]
        for word, ids in zip(words, tokenizer.encode_batch(list(words)), strict=True)
    )
    return tokens / sum(words.values())


def main() -> None:
    """Train each tokenizer × size and print both fertilities."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--language", required=True)
    parser.add_argument(
        "--corpus", type=Path, help="default: ../shared/corpora/hft2022/<language>.txt.gz"
    )
    parser.add_argument("--tokenizers", nargs="+", required=True)
    parser.add_argument("--sizes", nargs="+", type=int, required=True)
    parser.add_argument("--heldout", type=float, default=1000)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    corpus = args.corpus or CORPORA / f"{args.language}.txt.gz"
    heldout = int(args.heldout) if args.heldout >= 1 else args.heldout
    print(f"{'tokenizer':<18} {'size':>6} {'running text':>13} {'words alone':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        train, held = Path(tmp) / "train.txt", Path(tmp) / "heldout.txt"
        prepare_corpus(
            [corpus],
            train,
            held,
            Path(tmp) / "stats.json",
            label=args.language,
            heldout=heldout,
            seed=args.seed,
        )
        for name in args.tokenizers:
            for size in args.sizes:
                spec = TrainSpec(size, seed=args.seed, size_policy="adjust", label=args.language)
                tokenizer = adapter_class(name).train(train, spec)
                metrics, _ = compute_metrics(tokenizer, held)
                alone = words_alone(tokenizer, held)
                print(
                    f"{name:<18} {size:>6} {metrics['fertility']:>13.2f} {alone:>12.2f}", flush=True
                )


if __name__ == "__main__":
    main()
