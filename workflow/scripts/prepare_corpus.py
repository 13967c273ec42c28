"""Snakemake script of rule prepare_corpus (workflow/rules/corpora.smk)."""

from tokstudy.steps.corpora import prepare_corpus

prepare_corpus(snakemake)
