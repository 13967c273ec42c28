"""Wordmap (Jung, 2023, "Lexicalizing a BERT tokenizer") for German.

Word maps compare a target word with every word of a lexeme list at both ends
(:mod:`.maps`); z-scores over the summed maps pick affixes and stems, which form the
segmenter's vocabulary (:mod:`.vocabulary`); the segmenter picks the best segmentation of a
word by the thesis's score (:mod:`.segmenter`). HanTa decides which words are segmented
(:mod:`.tagging`), and WordPiece is trained and applied on the pre-segmented text
(:mod:`.presegment`; the ``wordmap_wordpiece`` adapter is
:mod:`tokstudy.tokenizers.adapters.wordmap`).
"""
