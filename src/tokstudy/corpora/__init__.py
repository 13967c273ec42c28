"""Corpora: :mod:`.prepare` (download, clean and split a corpus) and :mod:`.udhr` (the UDHR
translations, article by article). The stage's planner and steps are
:mod:`tokstudy.workflow.corpora`'s."""
