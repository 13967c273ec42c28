localrules: summarize_models  # trivial jobs: not worth a cluster job


from tokstudy.training.config import to_dict

# The model stage (config key models:): BERT MLM pretraining per (language, tokenizer, size,
# seed), MLM evaluation clean and noised, fine-tuning tasks, the causal LM (task clm:
# trained from scratch per run, scored in bits per byte), statistics tables.
# CharacterBERT runs (models.characterbert) go through the same rules as tokenizer
# "characterbert": they have no tokenizer folder and their corpus comes from
# prepare_characterbert.
plan = planners.models


wildcard_constraints:
    seed=r"\d+",
    scale=plan.clm_scale_pattern(),


rule silver_treebank:
    input:
        train=out(planners.corpora.TRAIN),
        heldout=out(planners.corpora.HELDOUT),
    output:
        directory(out(plan.SILVER_TREEBANK)),
    params:
        **step("tokstudy.workflow.models.steps.silver_treebank"),
        seed=study.seed,
    log:
        out(log_path("silver_treebank", "{language}")),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("silver_treebank")
    resources:
        **planners.resources("silver_treebank"),
    script:
        RUN_STEP


rule pretokenize_mlm:
    input:
        tokenizer=out(planners.tokenizers.TOKENIZER),
        train=out(planners.corpora.TRAIN),
    output:
        directory(out(plan.PRETOKENIZED)),
    params:
        **step("tokstudy.workflow.models.steps.pretokenize_mlm"),
        whole_word_mask=plan.config.pretrain.whole_word_mask,
    log:
        out(log_path("pretokenize_mlm", CELL)),
    conda:
        "../../envs/core.yaml"
    priority: plan.pretokenize_priority
    threads: planners.threads("pretokenize_mlm")
    resources:
        **planners.resources("pretokenize_mlm"),
    script:
        RUN_STEP


rule prepare_characterbert:
    input:
        train=out(planners.corpora.TRAIN),
    output:
        directory(out(plan.CHARACTERBERT_CORPUS)),
    params:
        **step("tokstudy.workflow.models.steps.prepare_characterbert"),
        config=plan.characterbert(),
    log:
        out(log_path("prepare_characterbert", plan.CHARACTERBERT_CELL)),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("prepare_characterbert")
    resources:
        **planners.resources("prepare_characterbert"),
    script:
        RUN_STEP


rule pretrain_mlm:
    input:
        tokenizer=plan.tokenizer_dir,
        corpus=plan.corpus_dir,
    output:
        directory(out(plan.PRETRAIN)),
    params:
        **step("tokstudy.workflow.models.steps.pretrain_mlm"),
        config=lambda w: plan.seeded("pretrain", w.seed),
        checkpoints=checkpoints("pretrain_mlm", plan.PRETRAIN),
    log:
        out(log_path("pretrain_mlm", plan.RUN_CELL)),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("pretrain_mlm")
    resources:
        **planners.resources("pretrain_mlm"),
    script:
        RUN_STEP


rule evaluate_mlm:
    input:
        tokenizer=plan.tokenizer_dir,
        pretrained=out(plan.PRETRAIN),
        heldout=out(planners.corpora.HELDOUT),
    output:
        metrics=out(plan.MLM),
        edits=out(plan.MLM_NOISE_EDITS),
    params:
        **step("tokstudy.workflow.models.steps.evaluate_mlm"),
        config=plan.evaluation(),
    log:
        out(log_path("evaluate_mlm", plan.RUN_CELL)),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("evaluate_mlm")
    resources:
        **planners.resources("evaluate_mlm"),
    script:
        RUN_STEP


rule finetune_model:
    input:
        unpack(plan.finetune_data),
        tokenizer=plan.tokenizer_dir,
        pretrained=out(plan.PRETRAIN),
    output:
        metrics=out(plan.FINETUNE_METRICS),
        predictions=out(plan.FINETUNE_PREDICTIONS),
        summary=out(plan.FINETUNE_SUMMARY),
    wildcard_constraints:
        task=plan.finetune_task_pattern(),
    params:
        **step("tokstudy.workflow.models.steps.finetune_model"),
        config=lambda w: plan.seeded("finetune", w.seed),
        noise_levels=plan.noise_levels(),
        noise_seed=plan.config.evaluation.noise_seed,
        noise_word_fraction=plan.config.evaluation.noise_word_fraction,
        sentence_feature=plan.config.sentence_feature,
        sentence_upos=list(plan.config.sentence_upos),
    log:
        out(log_path("finetune_model", plan.FINETUNE_CELL)),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("finetune_model")
    resources:
        **planners.resources("finetune_model"),
    script:
        RUN_STEP


rule train_clm:
    input:
        tokenizer=out(planners.tokenizers.TOKENIZER),
        corpus=out(plan.PRETOKENIZED),
        train=out(planners.corpora.TRAIN),
    output:
        directory(out(plan.CLM_TRAIN)),
    params:
        config=lambda w: plan.clm_settings(w.scale, w.seed),
        checkpoints=checkpoints("train_clm", plan.CLM_TRAIN),
        **step("tokstudy.workflow.models.steps.train_clm"),
    log:
        out(log_path("train_clm", plan.CLM_CELL)),
    conda:
        "../../envs/core.yaml"
    priority: plan.clm_priority
    threads: planners.threads("train_clm")
    resources:
        **planners.resources("train_clm"),
    script:
        RUN_STEP


rule evaluate_clm:
    input:
        tokenizer=out(planners.tokenizers.TOKENIZER),
        corpus=out(plan.PRETOKENIZED),
        trained=out(plan.CLM_TRAIN),
        heldout=out(planners.corpora.HELDOUT),
    output:
        scores=out(plan.CLM),
        details=out(plan.CLM_DETAILS),
    params:
        config=lambda w: plan.clm_settings(w.scale, w.seed),
        noise_levels=plan.noise_levels(),
        noise_seed=plan.config.evaluation.noise_seed,
        noise_word_fraction=plan.config.evaluation.noise_word_fraction,
        **step("tokstudy.workflow.models.steps.evaluate_clm"),
    log:
        out(log_path("evaluate_clm", plan.CLM_CELL)),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("evaluate_clm")
    resources:
        **planners.resources("evaluate_clm"),
    script:
        RUN_STEP


rule summarize_models:
    input:
        mlm=list(plan.mlm_files()),
        clm=list(plan.clm_files()),
        finetune=list(plan.finetune_files(plan.FINETUNE_METRICS)),
        predictions=list(plan.finetune_files(plan.FINETUNE_PREDICTIONS)),
    output:
        results=report(
            out(plan.RESULTS_TABLE),
            category="Models",
            labels={"table": "all model results (tidy)"},
        ),
        tables=expand(
            out(plan.SUMMARY_TABLE),
            table=plan.summary_tables(),
            ext=["tsv", "md"],
        ),
        png=report(
            out(plan.NOISE_PLOT, ext="png"),
            category="Models",
            labels={"plot": "metrics per tokenizer, clean and noised"},
        ),
        pdf=out(plan.NOISE_PLOT, ext="pdf"),
    params:
        **step("tokstudy.workflow.models.steps.summarize_models"),
        mlm=plan.mlm_files(),
        finetune=plan.finetune_files(plan.FINETUNE_METRICS),
        predictions=plan.finetune_files(plan.FINETUNE_PREDICTIONS),
        clm=plan.clm_files(),
        evaluation=to_dict(plan.config.evaluation),
    log:
        out(log_path("summarize_models")),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("summarize_models")
    resources:
        **planners.resources("summarize_models"),
    script:
        RUN_STEP


rule model_outputs:
    input:
        planners.models.targets(),
