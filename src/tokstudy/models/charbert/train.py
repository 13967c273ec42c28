"""CharacterBERT pretraining on the shared MLM loop (:mod:`tokstudy.models.pretrain`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import torch
from transformers import PreTrainedTokenizerFast

from tokstudy.models.charbert.data import CharBertBatches
from tokstudy.models.charbert.model import CharacterBertForMaskedLM, model_settings
from tokstudy.models.charbert.spelling import Speller
from tokstudy.models.config import CharBertConfig, PretrainConfig, from_mapping, to_dict
from tokstudy.models.data import TokenCorpus
from tokstudy.models.pretrain import SUMMARY_FILE, fingerprint, train_mlm
from tokstudy.training.checkpoint import checkpoint_folder
from tokstudy.training.core import finish_run
from tokstudy.training.device import describe, resolve_device
from tokstudy.training.loop import result_summary
from tokstudy.training.run_state import MODEL_DIR, restore_outputs


def pretrain_charbert(
    prepared_dir: Path,
    out_dir: Path,
    config: PretrainConfig,
    *,
    on_step: Callable[[int], None] | None = None,
    checkpoint_root: Path | None = None,
) -> Path:
    """Pretrain CharacterBERT on a folder from :func:`prepare_charbert`; the model folder.

    The character CNN's settings are those the folder was prepared with;
    ``checkpoint_root`` as in :func:`tokstudy.models.pretrain.pretrain_bert`.
    """
    out_dir = Path(out_dir)
    corpus = TokenCorpus.open(prepared_dir)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(prepared_dir)
    speller = Speller.load(prepared_dir)
    charbert = from_mapping(CharBertConfig, corpus.meta["charbert"], f"{prepared_dir}: charbert")
    device = resolve_device(config.device, config.on_missing_gpu)
    torch.manual_seed(config.seed)
    model = CharacterBertForMaskedLM(model_settings(config, charbert, speller, len(tokenizer)))
    run_fingerprint = fingerprint(
        config, corpus.meta["fingerprint"] + json.dumps(to_dict(charbert), sort_keys=True)
    )
    checkpoint_dir = checkpoint_folder(checkpoint_root, run_fingerprint)
    if restore_outputs(out_dir, checkpoint_dir):
        return out_dir / MODEL_DIR
    result = train_mlm(
        model,
        CharBertBatches(corpus, tokenizer, speller, config),
        config,
        out_dir,
        device=device,
        run_fingerprint=run_fingerprint,
        loss_fn=lambda model, batch: model.mlm_loss(**batch),
        on_step=on_step,
        checkpoint_dir=checkpoint_dir,
    )

    def save(directory: Path) -> None:
        model.save_pretrained(directory)
        tokenizer.save_pretrained(directory)
        speller.save(directory)

    summary = {
        "architecture": "characterbert",
        "config": to_dict(config),
        "charbert": to_dict(charbert),
        "corpus": str(prepared_dir),
        "word_vocab_size": len(tokenizer),
        "parameters": sum(p.numel() for p in model.parameters()),
        **result_summary(result),
        "device": describe(device),
    }
    return finish_run(out_dir, save, summary, SUMMARY_FILE, checkpoint_dir)
