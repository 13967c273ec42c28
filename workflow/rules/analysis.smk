localrules: segmentation_table, plot_parity_pud, multilingual_tables, plot_multilingual, correlation  # trivial jobs: not worth a cluster job


rule segmentation_table:
    input:
        train=out("corpora/{language}/train.txt"),
        tokenizers=lambda w: [study.tokenizer_dir(j) for j in planners.analyses.segmentation_jobs(w.language)],
    output:
        csv=out("tables/analysis/segmentation_{language}.csv"),
        markdown=report(
            out("tables/analysis/segmentation_{language}.md"),
            category="Analyses",
            labels={"analysis": "segmentations", "language": "{language}"},
        ),
    params:
        words=lambda w: planners.analyses.segmentation_words(w.language),
        tokenizers=lambda w: [
            f"{j.tokenizer} ({j.size})" for j in planners.analyses.segmentation_jobs(w.language)
        ],
    log:
        out("logs/segmentation_table/{language}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("segmentation_table")
    resources:
        **planners.resources("segmentation_table"),
    script:
        "../scripts/segmentation_table.py"


rule morphological_alignment:
    input:
        [study.tokenizer_dir(j) for j in study.scored_jobs()],
    output:
        csv=out("tables/analysis/morphological_alignment.csv"),
        markdown=report(
            out("tables/analysis/morphological_alignment.md"),
            category="Analyses",
            labels={"analysis": "morphological alignment (UD)"},
        ),
    params:
        ud_root=planners.analyses.section.get("ud_root"),
        jobs=[(j.language, j.tokenizer, j.size) for j in study.scored_jobs()],
    log:
        out("logs/morphological_alignment.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("morphological_alignment")
    resources:
        **planners.resources("morphological_alignment"),
    script:
        "../scripts/morphological_alignment.py"


rule tokenization_parity:
    input:
        **planners.analyses.parity_texts(),
        reference_tokenizers=[study.tokenizer_dir(a) for a, _ in planners.analyses.parity_pairs()],
        target_tokenizers=[study.tokenizer_dir(b) for _, b in planners.analyses.parity_pairs()],
    output:
        csv=out("tables/analysis/parity.csv"),
        markdown=report(
            out("tables/analysis/parity.md"),
            category="Analyses",
            labels={"analysis": "tokenization parity"},
        ),
    params:
        pairs=[(a.tokenizer, a.size) for a, _ in planners.analyses.parity_pairs()],
        reference=planners.analyses.parity_language("reference"),
        target=planners.analyses.parity_language("target"),
    log:
        out("logs/tokenization_parity.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("tokenization_parity")
    resources:
        **planners.resources("tokenization_parity"),
    script:
        "../scripts/tokenization_parity.py"


rule tokenization_parity_pud:
    input:
        corpora=list(planners.analyses.parity_files().values()),
        tokenizers=sorted({p.directory for p in planners.analyses.parity_tokenizers()}),
    output:
        csv=out("tables/analysis/parity_pud.csv"),
        markdown=report(
            out("tables/analysis/parity_pud.md"),
            category="Analyses",
            labels={"analysis": "tokenization premium (PUD)"},
        ),
        fairness_csv=out("tables/analysis/parity_pud_fairness.csv"),
        fairness_markdown=report(
            out("tables/analysis/parity_pud_fairness.md"),
            category="Analyses",
            labels={"analysis": "tokenization premium fairness (PUD)"},
        ),
        json=out("tables/analysis/parity_pud.json"),
    params:
        languages=list(planners.analyses.parity_files()),
        reference=planners.analyses.parity_language("reference"),
        tokenizers=[vars(p) for p in planners.analyses.parity_tokenizers()],
    log:
        out("logs/tokenization_parity_pud.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("tokenization_parity_pud")
    resources:
        **planners.resources("tokenization_parity_pud"),
    script:
        "../scripts/tokenization_parity_pud.py"


rule plot_parity_pud:
    input:
        out("tables/analysis/parity_pud.csv"),
    output:
        heatmap_png=report(
            out("plots/analysis/parity_pud_heatmap.png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (PUD): heat map"},
        ),
        heatmap_pdf=out("plots/analysis/parity_pud_heatmap.pdf"),
        bars_png=report(
            out("plots/analysis/parity_pud_bars.png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (PUD): bars"},
        ),
        bars_pdf=out("plots/analysis/parity_pud_bars.pdf"),
    params:
        reference=planners.analyses.parity_language("reference"),
    log:
        out("logs/plot_parity_pud.log"),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("plot_parity_pud")
    resources:
        **planners.resources("plot_parity_pud"),
    script:
        "../scripts/plot_parity_pud.py"


rule multilingual_corpus:
    input:
        [out(f"corpora/{language}/train.txt") for language in planners.analyses.multilingual_languages()],
    output:
        train=out("multilingual/corpus/train.txt"),
        summary=out("multilingual/corpus/mix.csv"),
    params:
        languages=planners.analyses.multilingual_languages(),
        sampling=planners.analyses.multilingual_sampling(),
    log:
        out("logs/multilingual_corpus.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("multilingual_corpus")
    resources:
        **planners.resources("multilingual_corpus"),
    script:
        "../scripts/multilingual_corpus.py"


rule train_multilingual_tokenizer:
    input:
        train=out("multilingual/corpus/train.txt"),
    output:
        directory(out("multilingual/tokenizers/{tokenizer}/{size}")),
    params:
        spec=lambda w: planners.analyses.multilingual_spec(w.tokenizer, w.size),
    log:
        out("logs/train_multilingual_tokenizer/{tokenizer}/{size}.log"),
    benchmark:
        out("benchmarks/train_multilingual_tokenizer/{tokenizer}/{size}.tsv")
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("train_multilingual_tokenizer")
    resources:
        **planners.resources("train_multilingual_tokenizer"),
    script:
        "../scripts/train_multilingual_tokenizer.py"


rule multilingual_tables:
    input:
        tokenizers=[
            out(f"multilingual/tokenizers/{j.tokenizer}/{j.size}")
            for j in planners.analyses.multilingual_jobs()
        ]
        + [study.pretrained_dir(j.tokenizer) for j in planners.analyses.multilingual_comparisons()],
        train=[out(f"corpora/{lang}/train.txt") for lang in planners.analyses.multilingual_languages()],
        heldout=[out(f"corpora/{lang}/heldout.txt") for lang in planners.analyses.multilingual_languages()],
        mix=out("multilingual/corpus/mix.csv"),
    output:
        share_csv=out("tables/analysis/multilingual_vocabulary_share.csv"),
        share_markdown=report(
            out("tables/analysis/multilingual_vocabulary_share.md"),
            category="Analyses",
            labels={"analysis": "multilingual tokenizers: vocabulary share"},
        ),
        fertility_csv=out("tables/analysis/multilingual_fertility.csv"),
        fertility_markdown=report(
            out("tables/analysis/multilingual_fertility.md"),
            category="Analyses",
            labels={"analysis": "multilingual tokenizers: fertility"},
        ),
    params:
        languages=planners.analyses.multilingual_languages(),
        tokenizers=[
            (j.tokenizer, j.size)
            for j in planners.analyses.multilingual_jobs() + planners.analyses.multilingual_comparisons()
        ],
    log:
        out("logs/multilingual_tables.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("multilingual_tables")
    resources:
        **planners.resources("multilingual_tables"),
    script:
        "../scripts/multilingual_tables.py"


rule plot_multilingual:
    input:
        out("tables/analysis/multilingual_vocabulary_share.csv"),
    output:
        png=report(
            out("plots/analysis/multilingual_vocabulary_share.png"),
            category="Analyses",
            labels={"analysis": "multilingual tokenizers: vocabulary share (plot)"},
        ),
        pdf=out("plots/analysis/multilingual_vocabulary_share.pdf"),
    log:
        out("logs/plot_multilingual.log"),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("plot_multilingual")
    resources:
        **planners.resources("plot_multilingual"),
    script:
        "../scripts/plot_multilingual.py"


rule analysis_outputs:
    input:
        planners.analyses.targets(),


# Correlation analysis (analyses.correlation, on whenever the study has a models: or nmt:
# section): intrinsic metrics of every cell against its downstream scores. NMT cells take
# the metrics of the NMT stage's own tokenizers (rule nmt_tokenizer_metrics).
from tokstudy.analysis.correlation_settings import NMT_FREQUENCIES, NMT_METRICS


rule nmt_tokenizer_metrics:
    input:
        tokenizer=out("nmt/tokenizers/{side}/{tokenizer}/{size}"),
        train=out("nmt/split/train.{side}"),
        heldout=out("nmt/split/test.{side}"),
    output:
        metrics=out(NMT_METRICS),
        frequencies=out(NMT_FREQUENCIES),
    wildcard_constraints:
        side=r"[a-z][a-z0-9_]*",
    params:
        language=lambda w: w.side,
    log:
        out("logs/nmt_tokenizer_metrics/{side}/{tokenizer}/{size}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("nmt_tokenizer_metrics")
    resources:
        **planners.resources("nmt_tokenizer_metrics"),
    script:
        "../scripts/nmt_tokenizer_metrics.py"


rule correlation:
    input:
        metrics=out("tables/metrics.csv"),
        model_results=out("tables/models/results.tsv") if planners.models.models else [],
        nmt_scores=planners.nmt.score_files(),
        nmt_metrics=planners.analyses.nmt_metric_files(),
    output:
        csv=out("tables/analysis/correlation.csv"),
        markdown=report(
            out("tables/analysis/correlation.md"),
            category="Analyses",
            labels={"analysis": "intrinsic metrics vs downstream scores"},
        ),
        ranking_csv=out("tables/analysis/correlation_ranking.csv"),
        ranking_markdown=report(
            out("tables/analysis/correlation_ranking.md"),
            category="Analyses",
            labels={"analysis": "intrinsic metrics ranked per downstream score"},
        ),
        png=report(
            out("plots/analysis/correlation.png"),
            category="Analyses",
            labels={"analysis": "intrinsic metrics vs downstream scores (plot)"},
        ),
    params:
        metrics=planners.metrics.names,
        settings=planners.analyses.correlation_settings(),
        nmt_sides=planners.analyses.nmt_metric_sides(),
    log:
        out("logs/correlation.log"),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("correlation")
    resources:
        **planners.resources("correlation"),
    script:
        "../scripts/correlation.py"


rule correlation_outputs:
    input:
        planners.analyses.correlation_targets(),
