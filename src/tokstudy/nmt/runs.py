"""One run of the NMT study: train a translation model on a split folder, translate with it.

Kept apart from :mod:`tokstudy.nmt.data`, :mod:`tokstudy.nmt.scoring` and
:mod:`tokstudy.nmt.report` so that the light jobs (split, score, report) and the workflow's
planning do not import ``torch`` and ``transformers``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from transformers import MarianMTModel

from tokstudy.files.lines import read_text_lines
from tokstudy.nmt.batching import shared_special_ids
from tokstudy.nmt.config import DecodeConfig, TrainConfig
from tokstudy.nmt.data import parse_direction, read_split, split_file, stream_split
from tokstudy.nmt.decode import encode_sources, translate
from tokstudy.nmt.model import check_vocab_sizes
from tokstudy.nmt.scoring import detokenize
from tokstudy.nmt.train import MODEL_DIR, train_translation_model
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.tokenizers.registry import load_tokenizer
from tokstudy.training.device import prepare_device, resolve_device

log = logging.getLogger(__name__)


def load_tokenizers(source_dir: Path, target_dir: Path) -> tuple[Tokenizer, Tokenizer]:
    """Source and target tokenizers; one object for both when the folders are the same."""
    source = load_tokenizer(Path(source_dir))
    if Path(source_dir).resolve() == Path(target_dir).resolve():
        return source, source
    return source, load_tokenizer(Path(target_dir))


def train(
    split_dir: Path,
    direction: str,
    source_tokenizer_dir: Path,
    target_tokenizer_dir: Path,
    out_dir: Path,
    config: TrainConfig,
    checkpoint_root: Path | None = None,
) -> dict:
    """Train one model (one seed) on the split's train pairs (streamed from its files),
    early-stopped on dev chrF; its checkpoint under ``checkpoint_root`` (see
    :func:`train_translation_model`)."""
    languages = parse_direction(direction)
    source_tokenizer, target_tokenizer = load_tokenizers(source_tokenizer_dir, target_tokenizer_dir)
    return train_translation_model(
        source_tokenizer,
        target_tokenizer,
        stream_split(split_dir, "train", languages),
        read_split(split_dir, "dev", languages),
        out_dir,
        config,
        checkpoint_root=checkpoint_root,
    )


def translate_split(
    run_dir: Path,
    split_dir: Path,
    direction: str,
    source_tokenizer_dir: Path,
    target_tokenizer_dir: Path,
    out_path: Path,
    config: DecodeConfig,
    split_name: str = "test",
) -> Path:
    """Translate one split with the run's best model into ``out_path`` (detokenized text)."""
    source_language, _ = parse_direction(direction)
    source_tokenizer, target_tokenizer = load_tokenizers(source_tokenizer_dir, target_tokenizer_dir)
    special = shared_special_ids(source_tokenizer, target_tokenizer)
    device = resolve_device(config.device, config.on_missing_gpu)
    prepare_device(device, variable_shapes=True)  # beam search: a new shape every step
    model = MarianMTModel.from_pretrained(Path(run_dir) / MODEL_DIR).to(device)
    check_vocab_sizes(model, len(source_tokenizer.vocab), len(target_tokenizer.vocab))
    lines = read_text_lines(split_file(split_dir, split_name, source_language))
    sources = encode_sources(source_tokenizer, lines, special)
    hypotheses = detokenize(target_tokenizer, translate(model, sources, special, config, device))
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text("".join(line + "\n" for line in hypotheses), encoding="utf-8")
    log.info(
        "%s: %d %s translations written to %s", direction, len(hypotheses), split_name, out_path
    )
    return out_path
