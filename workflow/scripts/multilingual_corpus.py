"""Snakemake script of rule multilingual_corpus (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import multilingual_corpus

multilingual_corpus(snakemake)
