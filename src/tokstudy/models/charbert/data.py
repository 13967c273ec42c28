"""CharacterBERT's training data: the word corpus of a text and its MLM batches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
from transformers import PreTrainedTokenizerFast

from tokstudy.files.lines import batched, iter_nonblank_lines
from tokstudy.models.charbert.spelling import Speller, build_vocabularies
from tokstudy.models.config import CharBertConfig, PretrainConfig, to_dict
from tokstudy.models.data import (
    Chunk,
    TokenCorpus,
    gather_blocks,
    vocab_fingerprint,
    with_cls_sep,
    write_corpus,
)
from tokstudy.models.pretrain import BlockBatches


def pretokenize_words(
    tokenizer: PreTrainedTokenizerFast,
    speller: Speller,
    text_path: Path,
    out_dir: Path,
    config: CharBertConfig,
) -> TokenCorpus:
    """Word ids and spellings of every word of a text, as a corpus on disk.

    The corpus metadata keeps ``config`` (key ``charbert``) for pretraining.
    """

    dtypes = {"ids": np.dtype(np.int32), "word_chars": np.dtype(np.uint16)}

    def rows() -> Iterator[Chunk]:
        for lines in batched(iter_nonblank_lines(text_path), 2000):
            chunk = []
            for line in lines:
                words = line.split()
                ids = np.asarray(tokenizer.convert_tokens_to_ids(words), dtype=np.int64)
                chunk.append({"ids": ids, "word_chars": speller.spell_all(words)})
            yield Chunk.of_rows(chunk, dtypes)

    meta = {
        "source": str(text_path),
        "vocab_size": len(tokenizer),
        "fingerprint": vocab_fingerprint(
            {**tokenizer.get_vocab(), **{f"char {c}": -1 - i for i, c in enumerate(speller.chars)}}
        ),
        "charbert": to_dict(config),
    }
    return write_corpus(out_dir, rows(), dtypes, meta)


class CharBertBatches(BlockBatches):
    """MLM batches of spelled words: masked words are re-spelled as ``[MASK]`` or random.

    Units are whole words, so ``whole_word_mask`` changes nothing here.
    """

    def __init__(
        self,
        corpus: TokenCorpus,
        tokenizer: PreTrainedTokenizerFast,
        speller: Speller,
        config: PretrainConfig,
    ) -> None:
        super().__init__(corpus, tokenizer, config)
        vocab = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
        self.vocab_spellings = torch.from_numpy(speller.spell_all(vocab).astype(np.int64))
        self.cls = (tokenizer.cls_token_id, speller.spell(tokenizer.cls_token))
        self.sep = (tokenizer.sep_token_id, speller.spell(tokenizer.sep_token))

    def __call__(self, step: int) -> dict[str, torch.Tensor]:
        starts = self.sampler.starts(step)
        ids = with_cls_sep(
            gather_blocks(self.corpus.ids, starts, self.block_len), self.cls[0], self.sep[0]
        )
        chars = with_cls_sep(
            gather_blocks(self.corpus.arrays["word_chars"], starts, self.block_len),
            self.cls[1],
            self.sep[1],
        )
        ids = torch.from_numpy(ids.astype(np.int64))
        masked, labels = self.masker(ids, step)
        char_ids = torch.from_numpy(chars.astype(np.int64))
        replaced = masked != ids
        char_ids[replaced] = self.vocab_spellings[masked[replaced]]
        return {"char_ids": char_ids, "labels": labels}


def prepare_charbert(text_path: Path, out_dir: Path, config: CharBertConfig) -> TokenCorpus:
    """Vocabularies and word corpus of a training text, shared by every seed.

    ``out_dir`` gets the corpus files plus the word tokenizer and ``chars.json``.
    """
    out_dir = Path(out_dir)
    tokenizer, speller = build_vocabularies(text_path, config)
    corpus = pretokenize_words(tokenizer, speller, text_path, out_dir, config)
    tokenizer.save_pretrained(out_dir)
    speller.save(out_dir)
    return corpus
