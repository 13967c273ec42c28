"""CharacterBERT: word embeddings from a character CNN, BERT encoder, word-level MLM.

Each whitespace word is spelled as ``[BOW] c1 … cn [EOW]`` (at most ``max_word_chars``
character ids), embedded by a character CNN with max-pooling and highway layers, and
projected to the hidden size; :class:`transformers.BertModel` runs on these
``inputs_embeds``. The MLM head predicts the word among the top-N training words
(``[UNK]`` for the rest). Input words are never unknown: any word has a spelling.
Fine-tuning puts a linear classifier on each word or on ``[CLS]``
(:class:`CharacterBertForClassification`), fed by a :class:`SpellingTokenizer`.

Modules by concern: :mod:`.spelling` (speller, vocabularies, the fine-tuning tokenizer),
:mod:`.model` (networks, model folder), :mod:`.data` (word corpus, MLM batches),
:mod:`.train` (pretraining) and :mod:`.scoring` (MLM scoring).

Model folder: ``charbert.json`` (sizes), ``model.safetensors`` (weights),
``chars.json`` (character vocabulary) and the word vocabulary as a ``transformers``
tokenizer (``tokenizer.json``).
"""

from tokstudy.models.charbert.data import prepare_charbert
from tokstudy.models.charbert.model import (
    CONFIG_FILE,
    CharacterBertForClassification,
    CharacterBertForMaskedLM,
    load_charbert,
    model_settings,
)
from tokstudy.models.charbert.scoring import CharBertScorer
from tokstudy.models.charbert.spelling import (
    BOW,
    EOW,
    FIRST_CHAR,
    Speller,
    SpellingTokenizer,
)
from tokstudy.models.charbert.train import pretrain_charbert

__all__ = [
    "BOW",
    "CONFIG_FILE",
    "EOW",
    "FIRST_CHAR",
    "CharBertScorer",
    "CharacterBertForClassification",
    "CharacterBertForMaskedLM",
    "Speller",
    "SpellingTokenizer",
    "load_charbert",
    "model_settings",
    "prepare_charbert",
    "pretrain_charbert",
]
