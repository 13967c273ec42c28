"""The tokenizer adapters, one module each: the :class:`~tokstudy.tokenizers.base.Tokenizer`
of every name in :data:`tokstudy.tokenizers.registry.ADAPTERS`. An algorithm of more than one
module keeps its own package beside them (:mod:`tokstudy.tokenizers.bbpe`,
:mod:`tokstudy.tokenizers.hft`, :mod:`tokstudy.tokenizers.wordmap`); its adapter is here.
"""
