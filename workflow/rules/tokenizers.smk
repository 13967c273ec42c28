rule train_tokenizer:
    # one job per trained cell: trains, saves, then scores the tokenizer (the training
    # text encoded once); pretrained cells are scored by rule compute_metrics
    input:
        train=out(planners.corpora.TRAIN),
        heldout=out(planners.corpora.HELDOUT),
    # update(): Snakemake keeps the trained tokenizer and its cost file while the job runs,
    # which reuses them when the training code, settings and text are those that made them
    # (a change to metric code rescores without retraining; tokstudy.workflow.cell_job)
    output:
        out_dir=update(directory(out(planners.tokenizers.TOKENIZER))),
        metrics=out(planners.metrics.METRICS),
        frequencies=out(planners.metrics.FREQUENCIES),
        cost=update(out(planners.tokenizers.CELL_COST)),
    params:
        **step("tokstudy.workflow.cell_job:train_cell"),
        training_code=code_fingerprint("tokstudy.tokenizers.build.train_and_save"),
        spec=lambda w: planners.tokenizers.train_spec(cell_of(w)),
    log:
        out(log_path("train_tokenizer", CELL)),
    benchmark:
        out(benchmark_path("train_tokenizer", CELL))
    wildcard_constraints:
        size=rf"\d+|{FULL_SIZE_LABEL}",
    priority: planners.cell_priority
    threads: planners.threads("train_tokenizer")
    resources:
        **planners.resources("train_tokenizer"),
    script:
        RUN_STEP


# with train_sizes_together: one job per language and tokenizer trains and scores every
# size of the study's vocab_sizes, one after the other (one process start, not one per
# size); its cells' files are those rule train_tokenizer would write, which the rule order
# leaves to it
if planners.tokenizers.trained_together():

    ruleorder: train_tokenizer_sizes > train_tokenizer

    rule train_tokenizer_sizes:
        input:
            train=out(planners.corpora.TRAIN),
            heldout=out(planners.corpora.HELDOUT),
        output:
            tokenizers=update(directory(every_size(planners.tokenizers.TOKENIZER))),
            metrics=every_size(planners.metrics.METRICS),
            frequencies=every_size(planners.metrics.FREQUENCIES),
            cost=update(every_size(planners.tokenizers.CELL_COST)),
        params:
            **step("tokstudy.workflow.cell_job:train_cell_sizes"),
            training_code=code_fingerprint("tokstudy.tokenizers.build.train_and_save"),
            specs=lambda w: planners.tokenizers.train_specs(w.language, w.tokenizer),
        log:
            out(log_path("train_tokenizer_sizes", planners.tokenizers.ALL_SIZES_CELL)),
        benchmark:
            out(benchmark_path("train_tokenizer_sizes", planners.tokenizers.ALL_SIZES_CELL))
        wildcard_constraints:
            tokenizer="|".join(planners.tokenizers.trained_together()),
        priority: planners.sizes_priority
        threads: planners.threads("train_tokenizer_sizes")
        resources:
            **planners.resources(
                "train_tokenizer_sizes", cells=len(planners.tokenizers.shared_sizes())
            ),
        script:
            RUN_STEP


# a tokenizer trained on the mixed text of analyses.multilingual
rule train_multilingual_tokenizer:
    input:
        train=out(planners.analyses["multilingual"].MULTILINGUAL_TRAIN),
        languages=out(planners.analyses["multilingual"].MULTILINGUAL_LANGUAGES),
    output:
        out_dir=directory(out(planners.tokenizers.MULTILINGUAL_TOKENIZER)),
    params:
        **step("tokstudy.tokenizers.build:train_to_directory"),
        spec=lambda w: planners.analyses["multilingual"].spec(w.tokenizer, w.size),
    log:
        out(log_path("train_multilingual_tokenizer", planners.tokenizers.MULTILINGUAL_CELL)),
    benchmark:
        out(benchmark_path("train_multilingual_tokenizer", planners.tokenizers.MULTILINGUAL_CELL))
    threads: planners.threads("train_multilingual_tokenizer")
    resources:
        **planners.resources("train_multilingual_tokenizer"),
    script:
        RUN_STEP
