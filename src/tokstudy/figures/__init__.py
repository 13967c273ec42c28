"""What every plot shares: the panel grid and reproducible saving (:mod:`.layout`) and one
colour per tokenizer (:mod:`.palette`)."""
