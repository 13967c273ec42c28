"""The ``clm`` task: a Llama-style decoder trained from scratch per cell, scored in bits
per byte on held-out text, beside the unigram baseline of the same tokenizer.

Text as a token stream (training and scoring alike): each line's tokens followed by the
tokenizer's ``[SEP]``, which stands for the line's newline; the scored stream starts with
one ``[SEP]``, as every line of the training stream follows one, so the first token is
predicted from a context the model was trained on. Every token after it is scored (every
``[SEP]`` included), and the scored text is the lines each followed by a newline::

    bits per byte = Σ token NLL (nats) / ln 2 / UTF-8 bytes of the scored text

with a 95 % interval from a bootstrap over held-out lines (each line's tokens and its
``[SEP]``, against its bytes and newline). ``roundtrip`` is the share of held-out lines the
tokenizer decodes back exactly: below 1.0 its model predicted a simpler text than the
bytes it is divided by (a normalising tokenizer), and the cell is marked ``lossy``.

Text longer than the context is scored with windows whose right edge moves ``stride``
tokens at a time; each token is scored once, in the window where it first appears, with
at least ``context - stride`` tokens of left context (all of them near the start).

Training folder of one run::

    checkpoint.pt     last checkpoint (removed when the run completes)
    train_log.csv     step, loss, validation_loss, lr, tokens_per_s, flops_per_s, mfu,
                      elapsed_s (mfu: share of the device's dense peak; empty on the CPU)
    model/            the trained ``LlamaForCausalLM`` (``save_pretrained``)
    train.json        settings, budget and summary, written last: the completion marker

Reruns resume from ``checkpoint.pt``: the blocks of a step depend only on
``(seed, step)`` and the RNG states are restored, so a resumed run ends with the same
weights as an uninterrupted one.
"""
