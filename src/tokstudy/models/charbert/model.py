"""CharacterBERT's networks: character CNN, BERT encoder, MLM head and classifiers.

Spelled words are embedded by a character CNN with max-pooling and highway layers and
projected to the hidden size; :class:`transformers.BertModel` runs on these
``inputs_embeds``. Model folder: ``charbert.json`` (sizes), ``model.safetensors``
(weights), ``chars.json`` and the word vocabulary (``tokenizer.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
from tokstudy.models.charbert.spelling import CHAR_PAD, Speller
from tokstudy.models.config import PRESETS, CharBertConfig, PretrainConfig, from_mapping, to_dict
from tokstudy.models.masking import labelled
from tokstudy.tokenizers.base import PAD, SPECIAL_TOKENS

CONFIG_FILE = "charbert.json"
WEIGHTS_FILE = "model.safetensors"


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

    def mlm_loss(
        self,
        char_ids: torch.Tensor,
        labels: torch.Tensor,
        label_positions: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Mean cross-entropy over the positions whose label is not ``-100`` (found by the
        host where ``label_positions`` is given: :func:`~tokstudy.models.masking.labelled`)."""
        hidden, labels = labelled(self.encode(char_ids), labels, label_positions)
        logits = self.decoder(self.head_transform(hidden))
        return nn.functional.cross_entropy(logits.float(), labels)

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
            "attention_probs_dropout_prob": config.attention_dropout_prob,
            "attn_implementation": "sdpa",
        },
    }


def load_charbert(directory: Path) -> tuple[CharacterBertForMaskedLM, Any, Speller]:
    """Model, word tokenizer and speller from a CharacterBERT model folder."""
    directory = Path(directory)
    model = CharacterBertForMaskedLM.from_pretrained(directory)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(directory)
    return model, tokenizer, Speller.load(directory)
