"""Snakemake script of rule nmt_cldr_corpus (workflow/rules/nmt.smk)."""

from tokstudy.steps.nmt import nmt_cldr_corpus

nmt_cldr_corpus(snakemake)
