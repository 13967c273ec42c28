"""CharacterBERT: word embeddings from a character CNN, BERT encoder, word-level MLM.

Each whitespace word is spelled as ``[BOW] c1 … cn [EOW]`` (at most ``max_word_chars``
character ids), embedded by a character CNN with max-pooling and highway layers, and
projected to the hidden size; :class:`transformers.BertModel` runs on these
``inputs_embeds``. The MLM head predicts the word among the top-N training words
(``[UNK]`` for the rest). Input words are never unknown: any word has a spelling.
Fine-tuning puts a linear classifier on each word or on ``[CLS]``
(:class:`CharacterBertForClassification`), fed by a :class:`SpellingTokenizer`.

Model folder: ``charbert.json`` (sizes), ``model.safetensors`` (weights),
``chars.json`` (character vocabulary) and the word vocabulary as a ``transformers``
tokenizer (``tokenizer.json``).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_model, save_model
from torch import nn
from transformers import BertConfig, BertModel, PreTrainedTokenizerFast
from transformers.modeling_outputs import (
    MaskedLMOutput,
    SequenceClassifierOutput,
    TokenClassifierOutput,
)
from transformers.models.bert.modeling_bert import BertPredictionHeadTransform

from tokstudy.errors import TokstudyError
from tokstudy.models.config import PRESETS, CharBertConfig, PretrainConfig, from_mapping, to_dict
from tokstudy.models.data import (
    BlockSampler,
    TokenCorpus,
    gather_blocks,
    iter_chunks,
    vocab_fingerprint,
    with_cls_sep,
    write_corpus,
)
from tokstudy.models.device import resolve_device
from tokstudy.models.hf_wrap import word_level
from tokstudy.models.masking import Masker
from tokstudy.models.pretrain import fingerprint, finish_run, train_loop
from tokstudy.models.scoring import Encoded
from tokstudy.tokenizers.base import CLS, MASK, PAD, SEP, SPECIAL_TOKENS, UNK

log = logging.getLogger(__name__)

CHAR_PAD, CHAR_UNK, BOW, EOW = 0, 1, 2, 3
#: character ids 4 … 8 spell the special words [UNK] [PAD] [CLS] [SEP] [MASK]
FIRST_SPECIAL_CHAR = 4
FIRST_CHAR = FIRST_SPECIAL_CHAR + len(SPECIAL_TOKENS)
CONFIG_FILE = "charbert.json"
CHARS_FILE = "chars.json"
WEIGHTS_FILE = "model.safetensors"


class Speller:
    """Turns words into fixed-length rows of character ids."""

    def __init__(self, chars: tuple[str, ...], max_word_chars: int) -> None:
        self.chars = tuple(chars)
        self.max_word_chars = max_word_chars
        self._index = {c: FIRST_CHAR + i for i, c in enumerate(self.chars)}

    @property
    def n_char_ids(self) -> int:
        """Size of the character embedding table."""
        return FIRST_CHAR + len(self.chars)

    def spell(self, word: str) -> np.ndarray:
        """``[BOW] chars [EOW]`` padded with 0 (long words cut); special words get one id."""
        row = np.full(self.max_word_chars, CHAR_PAD, dtype=np.uint16)
        if word in SPECIAL_TOKENS:
            ids = [BOW, FIRST_SPECIAL_CHAR + SPECIAL_TOKENS.index(word), EOW]
        else:
            body = word[: self.max_word_chars - 2]
            ids = [BOW, *(self._index.get(c, CHAR_UNK) for c in body), EOW]
        row[: len(ids)] = ids
        return row

    def spell_all(self, words: list[str]) -> np.ndarray:
        """Rows for a list of words (shape ``(len(words), max_word_chars)``)."""
        if not words:
            return np.zeros((0, self.max_word_chars), dtype=np.uint16)
        return np.stack([self.spell(w) for w in words])

    def save(self, directory: Path) -> None:
        """Write ``chars.json``."""
        payload = {"chars": list(self.chars), "max_word_chars": self.max_word_chars}
        (Path(directory) / CHARS_FILE).write_text(json.dumps(payload), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> Speller:
        """Read ``chars.json``."""
        payload = json.loads((Path(directory) / CHARS_FILE).read_text(encoding="utf-8"))
        return cls(tuple(payload["chars"]), payload["max_word_chars"])


def build_vocabularies(
    text_path: Path, config: CharBertConfig
) -> tuple[PreTrainedTokenizerFast, Speller]:
    """Word vocabulary (top-N words) and character vocabulary of a training text."""
    words: Counter[str] = Counter()
    for chunk in iter_chunks(text_path, 5000):
        for line in chunk:
            words.update(line.split())
    chars: Counter[str] = Counter()
    for word, count in words.items():
        for char in word:
            chars[char] += count
    n_words = config.word_vocab_size - len(SPECIAL_TOKENS)
    top_words = [w for w, _ in sorted(words.items(), key=lambda wc: (-wc[1], wc[0]))[:n_words]]
    top_chars = [c for c, _ in sorted(chars.items(), key=lambda cc: (-cc[1], cc[0]))]
    speller = Speller(tuple(top_chars[: config.max_chars]), config.max_word_chars)
    return word_level(top_words), speller


class Highway(nn.Module):
    """Highway layer: ``g * relu(W x) + (1 - g) * x`` with gate ``g = sigmoid(V x)``."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.transform = nn.Linear(size, size)
        self.gate = nn.Linear(size, size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate = torch.sigmoid(self.gate(x))
        return gate * torch.relu(self.transform(x)) + (1 - gate) * x


class CharacterCNN(nn.Module):
    """Word vectors from character ids: embeddings → CNNs → max-pool → highway → linear."""

    def __init__(self, n_char_ids: int, config: CharBertConfig, hidden_size: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(n_char_ids, config.char_embedding_dim, padding_idx=CHAR_PAD)
        self.convs = nn.ModuleList(
            nn.Conv1d(config.char_embedding_dim, n_filters, width)
            for width, n_filters in config.filters
        )
        size = sum(n for _, n in config.filters)
        self.highways = nn.ModuleList(Highway(size) for _ in range(config.highway_layers))
        self.projection = nn.Linear(size, hidden_size)

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        """``(batch, words, chars)`` ids → ``(batch, words, hidden)`` vectors."""
        batch, words, chars = char_ids.shape
        x = self.embedding(char_ids.reshape(batch * words, chars)).transpose(1, 2)
        x = torch.cat([torch.relu(conv(x)).amax(dim=2) for conv in self.convs], dim=1)
        for highway in self.highways:
            x = highway(x)
        return self.projection(x).reshape(batch, words, -1)


class CharacterBertEncoder(nn.Module):
    """Character CNN + BERT encoder: contextual vectors of spelled words.

    The encoder gets ``inputs_embeds``; its own word-embedding table is unused and kept
    at one row per special token. ``settings`` are those of ``charbert.json``.
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__()
        self.settings = settings
        charbert = from_mapping(CharBertConfig, settings["charbert"], "charbert.json: charbert")
        self.encoder_config = BertConfig(vocab_size=len(SPECIAL_TOKENS), **settings["bert"])
        hidden = self.encoder_config.hidden_size
        self.char_cnn = CharacterCNN(settings["n_char_ids"], charbert, hidden)
        self.bert = BertModel(self.encoder_config, add_pooling_layer=False)

    def encode(
        self, char_ids: torch.Tensor, attention_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Contextual word vectors (batch, words, hidden) of spelled words."""
        embeds = self.char_cnn(char_ids.long())
        return self.bert(inputs_embeds=embeds, attention_mask=attention_mask).last_hidden_state


class CharacterBertForMaskedLM(CharacterBertEncoder):
    """CharacterBERT with a word-level MLM head over the top-N training words."""

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        self.head_transform = BertPredictionHeadTransform(self.encoder_config)
        self.decoder = nn.Linear(self.encoder_config.hidden_size, settings["word_vocab_size"])

    def forward(
        self, char_ids: torch.Tensor, attention_mask: torch.Tensor | None = None
    ) -> MaskedLMOutput:
        """Logits over the word vocabulary at every position."""
        hidden = self.encode(char_ids, attention_mask)
        return MaskedLMOutput(logits=self.decoder(self.head_transform(hidden)))

    def mlm_loss(self, char_ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over the positions whose label is not ``-100``."""
        chosen = labels != -100
        hidden = self.encode(char_ids)[chosen]
        logits = self.decoder(self.head_transform(hidden))
        return nn.functional.cross_entropy(logits.float(), labels[chosen])

    def save_pretrained(self, directory: Path) -> None:
        """Write ``charbert.json`` and the weights into ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / CONFIG_FILE).write_text(json.dumps(self.settings, indent=1), encoding="utf-8")
        save_model(self, str(directory / WEIGHTS_FILE))

    @classmethod
    def from_pretrained(cls, directory: Path) -> CharacterBertForMaskedLM:
        """Read a model folder written by :meth:`save_pretrained`."""
        directory = Path(directory)
        config_path = directory / CONFIG_FILE
        if not config_path.is_file():
            raise TokstudyError(f"{directory}: not a CharacterBERT model folder (no {CONFIG_FILE})")
        model = cls(json.loads(config_path.read_text(encoding="utf-8")))
        load_model(model, str(directory / WEIGHTS_FILE))
        return model


class CharacterBertForClassification(CharacterBertEncoder):
    """CharacterBERT with a linear classifier on every word (``per_word``) or on ``[CLS]``.

    Called like a ``transformers`` classifier: ``input_ids`` are spelled words
    (batch, words, characters); ``labels`` per word (``-100``: ignored) or per sentence.
    """

    def __init__(self, settings: dict[str, Any], num_labels: int, *, per_word: bool) -> None:
        super().__init__(settings)
        self.per_word = per_word
        self.dropout = nn.Dropout(self.encoder_config.hidden_dropout_prob)
        self.classifier = nn.Linear(self.encoder_config.hidden_size, num_labels)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
    ) -> TokenClassifierOutput | SequenceClassifierOutput:
        """Logits (and the cross-entropy loss when ``labels`` are given)."""
        hidden = self.encode(input_ids, attention_mask)
        logits = self.classifier(self.dropout(hidden if self.per_word else hidden[:, 0]))
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(
                logits.float().flatten(0, -2), labels.flatten(), ignore_index=-100
            )
        output = TokenClassifierOutput if self.per_word else SequenceClassifierOutput
        return output(loss=loss, logits=logits)

    @classmethod
    def from_mlm(
        cls, directory: Path, num_labels: int, *, per_word: bool
    ) -> CharacterBertForClassification:
        """A classifier whose encoder is that of the CharacterBERT MLM in ``directory``."""
        mlm = CharacterBertForMaskedLM.from_pretrained(directory)
        model = cls(mlm.settings, num_labels, per_word=per_word)
        model.char_cnn.load_state_dict(mlm.char_cnn.state_dict())
        model.bert.load_state_dict(mlm.bert.state_dict())
        return model


class SpellingTokenizer:
    """The tokenizer interface fine-tuning uses, for CharacterBERT: a unit per word.

    ``tokenizer(texts)["input_ids"]`` gives each text's whitespace words as character-id
    rows (tuples); the special "ids" are the rows of the special words.
    """

    def __init__(self, speller: Speller) -> None:
        self.speller = speller
        self.cls_token_id, self.sep_token_id, self.pad_token_id, self.unk_token_id = (
            tuple(speller.spell(token).tolist()) for token in (CLS, SEP, PAD, UNK)
        )

    def __call__(
        self, texts: list[str], *, add_special_tokens: bool = False
    ) -> dict[str, list[list[tuple[int, ...]]]]:
        """Spelled words of each text (special tokens are never added)."""
        return {
            "input_ids": [
                [tuple(row) for row in self.speller.spell_all(text.split()).tolist()]
                for text in texts
            ]
        }


def model_settings(
    config: PretrainConfig, charbert: CharBertConfig, speller: Speller, word_vocab_size: int
) -> dict[str, Any]:
    """JSON-ready sizes of a CharacterBERT model."""
    return {
        "charbert": to_dict(charbert),
        "n_char_ids": speller.n_char_ids,
        "word_vocab_size": word_vocab_size,
        "bert": {
            **PRESETS[config.preset],
            "max_position_embeddings": config.max_length,
            "pad_token_id": SPECIAL_TOKENS.index(PAD),
            "hidden_dropout_prob": config.dropout,
            "attention_probs_dropout_prob": config.dropout,
            "attn_implementation": "sdpa",
        },
    }


def pretokenize_words(
    tokenizer: PreTrainedTokenizerFast,
    speller: Speller,
    text_path: Path,
    out_dir: Path,
    config: CharBertConfig,
) -> TokenCorpus:
    """Word ids and spellings of every word of a text, as a memory-mapped corpus.

    The corpus metadata keeps ``config`` (key ``charbert``) for pretraining.
    """

    def rows() -> Iterator[list[dict[str, np.ndarray]]]:
        for lines in iter_chunks(text_path, 2000):
            chunk = []
            for line in lines:
                words = line.split()
                ids = np.asarray(tokenizer.convert_tokens_to_ids(words), dtype=np.int64)
                chunk.append({"ids": ids, "word_chars": speller.spell_all(words)})
            yield chunk

    dtypes = {"ids": np.dtype(np.int32), "word_chars": np.dtype(np.uint16)}
    meta = {
        "source": str(text_path),
        "vocab_size": len(tokenizer),
        "fingerprint": vocab_fingerprint(
            {**tokenizer.get_vocab(), **{f"char {c}": -1 - i for i, c in enumerate(speller.chars)}}
        ),
        "charbert": to_dict(config),
    }
    return write_corpus(out_dir, rows(), dtypes, meta)


class CharBertBatches:
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
        self.corpus = corpus
        self.block_len = config.max_length - 2
        self.sampler = BlockSampler(corpus.n_tokens, self.block_len, config.batch_size, config.seed)
        self.masker = Masker(
            tokenizer,
            mlm_probability=config.mlm_probability,
            mask_replace_prob=config.mask_replace_prob,
            random_replace_prob=config.random_replace_prob,
            seed=config.seed,
        )
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


def pretrain_charbert(
    prepared_dir: Path,
    out_dir: Path,
    config: PretrainConfig,
    *,
    on_step: Callable[[int], None] | None = None,
) -> Path:
    """Pretrain CharacterBERT on a folder from :func:`prepare_charbert`; the model folder.

    The character CNN's settings are those the folder was prepared with.
    """
    out_dir = Path(out_dir)
    corpus = TokenCorpus.open(prepared_dir)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(prepared_dir)
    speller = Speller.load(prepared_dir)
    charbert = from_mapping(CharBertConfig, corpus.meta["charbert"], f"{prepared_dir}: charbert")
    device = resolve_device(config.device, config.on_missing_gpu)
    torch.manual_seed(config.seed)
    model = CharacterBertForMaskedLM(model_settings(config, charbert, speller, len(tokenizer)))
    result = train_loop(
        model,
        CharBertBatches(corpus, tokenizer, speller, config),
        config,
        out_dir,
        device=device,
        run_fingerprint=fingerprint(
            config, corpus.meta["fingerprint"] + json.dumps(to_dict(charbert), sort_keys=True)
        ),
        loss_fn=lambda model, batch: model.mlm_loss(**batch),
        on_step=on_step,
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
        **result.__dict__,
    }
    return finish_run(out_dir, save, summary)


def load_charbert(directory: Path) -> tuple[CharacterBertForMaskedLM, Any, Speller]:
    """Model, word tokenizer and speller from a CharacterBERT model folder."""
    directory = Path(directory)
    model = CharacterBertForMaskedLM.from_pretrained(directory)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(directory)
    return model, tokenizer, Speller.load(directory)


class CharBertScorer:
    """Scores text with CharacterBERT (see :func:`tokstudy.models.scoring.score_lines`).

    Units are whitespace words; targets outside the word vocabulary are ``[UNK]``.
    """

    def __init__(
        self,
        model: CharacterBertForMaskedLM,
        tokenizer: Any,
        speller: Speller,
        *,
        max_length: int = 128,
        device: torch.device | None = None,
        bf16: bool = True,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.speller = speller
        self.max_units = max_length - 2
        self.device = device or torch.device("cpu")
        self.bf16 = bf16
        self.cls, self.sep, self.mask, self.pad = (
            speller.spell(token).astype(np.int64) for token in (CLS, SEP, MASK, PAD)
        )
        self.unk_id = tokenizer.unk_token_id

    def encode(self, lines: list[str]) -> list[Encoded]:
        """Spellings and word ids of each line's words."""
        encoded = []
        for line in lines:
            words = line.split()
            ids = np.asarray(self.tokenizer.convert_tokens_to_ids(words), dtype=np.int64)
            encoded.append(Encoded(self.speller.spell_all(words).astype(np.int64), ids))
        return encoded

    def logits(self, inputs: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Word-vocabulary logits (batch, words, vocabulary)."""
        return self.model(char_ids=inputs, attention_mask=attention_mask).logits
