"""Snakemake script of rule download_corpus (workflow/rules/corpora.smk)."""

from tokstudy.steps.corpora import download_corpus

download_corpus(snakemake)
