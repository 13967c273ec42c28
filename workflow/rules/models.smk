localrules: summarize_models  # trivial jobs: not worth a cluster job


from tokstudy.training.config import to_dict

# The model stage (config key models:): BERT MLM pretraining per (language, tokenizer, size,
# seed), MLM evaluation clean and noised, fine-tuning tasks, the causal LM (task clm:
# trained from scratch per run, scored in bits per byte), statistics tables.
# CharacterBERT runs (models.characterbert) go through the same rules as tokenizer
# "characterbert": they have no tokenizer folder and their corpus comes from
# prepare_characterbert.
models_plan = planners.models
models_section = models_plan.section
mlm_plan = models_plan.planner("mlm")
finetune_plan = models_plan.kind_planner("finetune")
clm_plan = models_plan.planner("clm")


wildcard_constraints:
    seed=r"\d+",
    scale=clm_plan.clm_scale_pattern(),


rule silver_treebank:
    input:
        train=out(planners.corpora.TRAIN),
        heldout=out(planners.corpora.HELDOUT),
    output:
        out_dir=directory(out(finetune_plan.SILVER_TREEBANK)),
    params:
        **step("tokstudy.models.silver:make_silver_treebank"),
        name=lambda w: f"{w.language}_silver",
        seed=study.seed,
    log:
        out(log_path("silver_treebank", "{language}")),
    threads: planners.threads("silver_treebank")
    resources:
        **planners.resources("silver_treebank"),
    script:
        RUN_STEP


rule pretokenize_mlm:
    input:
        tokenizer_dir=out(planners.tokenizers.TOKENIZER),
        train=out(planners.corpora.TRAIN),
    output:
        out_dir=directory(out(models_section.PRETOKENIZED)),
    params:
        **step("tokstudy.models.family:pretokenize_text"),
        whole_word_mask=models_section.config.pretrain.whole_word_mask,
    log:
        out(log_path("pretokenize_mlm", CELL)),
    priority: clm_plan.pretokenize_priority
    threads: planners.threads("pretokenize_mlm")
    resources:
        **planners.resources("pretokenize_mlm"),
    script:
        RUN_STEP


# models.pretokenize_shards > 1: each cell's training text is tokenized in that many jobs
# (byte ranges of the text, spread by the cluster), merged into the corpus one job writes.
if models_section.pretokenize_shards > 1:

    ruleorder: merge_pretokenized > pretokenize_mlm

    rule pretokenize_shard:
        input:
            tokenizer_dir=out(planners.tokenizers.TOKENIZER),
            train=out(planners.corpora.TRAIN),
        output:
            out_dir=temp(directory(out(models_section.PRETOKENIZED_SHARD))),
        wildcard_constraints:
            shard=r"\d+",
        params:
            **step("tokstudy.models.family:pretokenize_text"),
            whole_word_mask=models_section.config.pretrain.whole_word_mask,
            shards=models_section.pretokenize_shards,
        log:
            out(log_path("pretokenize_shard", models_section.SHARD_CELL)),
        priority: clm_plan.pretokenize_priority
        threads: planners.threads("pretokenize_shard")
        resources:
            **planners.resources("pretokenize_shard"),
        script:
            RUN_STEP


if models_section.pretokenize_shards > 1:

    rule merge_pretokenized:
        input:
            parts=models_section.pretokenized_shards,
        output:
            out_dir=directory(out(models_section.PRETOKENIZED)),
        params:
            **step("tokstudy.models.data:merge_corpora"),
        log:
            out(log_path("merge_pretokenized", CELL)),
        priority: clm_plan.pretokenize_priority
        threads: planners.threads("merge_pretokenized")
        resources:
            **planners.resources("merge_pretokenized"),
        script:
            RUN_STEP


rule prepare_characterbert:
    input:
        text_path=out(planners.corpora.TRAIN),
    output:
        out_dir=directory(out(mlm_plan.CHARACTERBERT_CORPUS)),
    params:
        **step("tokstudy.models.charbert.data:prepare_charbert"),
        config=mlm_plan.characterbert(),
    log:
        out(log_path("prepare_characterbert", mlm_plan.CHARACTERBERT_CELL)),
    threads: planners.threads("prepare_characterbert")
    resources:
        **planners.resources("prepare_characterbert"),
    script:
        RUN_STEP


rule pretrain_mlm:
    input:
        tokenizer_dir=mlm_plan.tokenizer_dir,
        corpus_dir=mlm_plan.corpus_dir,
    output:
        out_dir=directory(out(mlm_plan.PRETRAIN)),
    params:
        **step("tokstudy.models.family:pretrain"),
        config=lambda w: models_section.seeded("pretrain", w.seed),
        checkpoints=checkpoints("pretrain_mlm", mlm_plan.PRETRAIN),
    log:
        out(log_path("pretrain_mlm", models_section.RUN_CELL)),
    threads: planners.threads("pretrain_mlm")
    resources:
        **planners.resources("pretrain_mlm"),
    script:
        RUN_STEP


rule evaluate_mlm:
    input:
        tokenizer_dir=mlm_plan.tokenizer_dir,
        pretrained=out(mlm_plan.PRETRAIN),
        heldout=out(planners.corpora.HELDOUT),
    output:
        out_tsv=out(mlm_plan.MLM),
        edits_tsv=out(mlm_plan.MLM_NOISE_EDITS),
    params:
        **step("tokstudy.models.tasks:evaluate_mlm"),
        model_dir=model_folder(mlm_plan.PRETRAIN),
        config=mlm_plan.evaluation(),
    log:
        out(log_path("evaluate_mlm", models_section.RUN_CELL)),
    threads: planners.threads("evaluate_mlm")
    resources:
        **planners.resources("evaluate_mlm"),
    script:
        RUN_STEP


rule finetune_model:
    input:
        unpack(finetune_plan.finetune_data),
        tokenizer_dir=mlm_plan.tokenizer_dir,
        pretrained=out(mlm_plan.PRETRAIN),
    output:
        metrics=out(finetune_plan.FINETUNE_METRICS),
        predictions=out(finetune_plan.FINETUNE_PREDICTIONS),
        summary=out(finetune_plan.FINETUNE_SUMMARY),
    wildcard_constraints:
        task=finetune_plan.finetune_task_pattern(),
    params:
        **step("tokstudy.models.tasks:finetune_task"),
        model_dir=model_folder(mlm_plan.PRETRAIN),
        config=lambda w: models_section.seeded("finetune", w.seed),
        noise_levels=models_section.noise_levels(),
        noise_seed=models_section.config.evaluation.noise_seed,
        noise_word_fraction=models_section.config.evaluation.noise_word_fraction,
        sentence_feature=models_section.config.sentence_feature,
        sentence_upos=list(models_section.config.sentence_upos),
    log:
        out(log_path("finetune_model", finetune_plan.FINETUNE_CELL)),
    threads: planners.threads("finetune_model")
    resources:
        **planners.resources("finetune_model"),
    script:
        RUN_STEP


rule train_clm:
    input:
        tokenizer_dir=out(planners.tokenizers.TOKENIZER),
        corpus_dir=out(models_section.PRETOKENIZED),
        train_text=out(planners.corpora.TRAIN),
    output:
        out_dir=directory(out(clm_plan.CLM_TRAIN)),
    params:
        config=lambda w: clm_plan.clm_settings(w.scale, w.seed),
        checkpoints=checkpoints("train_clm", clm_plan.CLM_TRAIN),
        **step("tokstudy.models.clm.train:train_clm"),
    log:
        out(log_path("train_clm", clm_plan.CLM_CELL)),
    priority: clm_plan.clm_priority
    threads: planners.threads("train_clm")
    resources:
        **planners.resources("train_clm"),
    script:
        RUN_STEP


rule evaluate_clm:
    input:
        tokenizer_dir=out(planners.tokenizers.TOKENIZER),
        corpus_dir=out(models_section.PRETOKENIZED),
        trained=out(clm_plan.CLM_TRAIN),
        heldout=out(planners.corpora.HELDOUT),
    output:
        out_tsv=out(clm_plan.CLM),
        details=out(clm_plan.CLM_DETAILS),
    params:
        config=lambda w: clm_plan.clm_settings(w.scale, w.seed),
        noise_levels=models_section.noise_levels(),
        noise_seed=models_section.config.evaluation.noise_seed,
        noise_word_fraction=models_section.config.evaluation.noise_word_fraction,
        **step("tokstudy.models.clm.scoring:score_clm"),
        model_dir=model_folder(clm_plan.CLM_TRAIN),
    log:
        out(log_path("evaluate_clm", clm_plan.CLM_CELL)),
    threads: planners.threads("evaluate_clm")
    resources:
        **planners.resources("evaluate_clm"),
    script:
        RUN_STEP


rule summarize_models:
    input:
        score_files=list(models_plan.score_files()),
        prediction_files=list(finetune_plan.finetune_files(finetune_plan.FINETUNE_PREDICTIONS)),
    output:
        results=report(
            out(models_plan.RESULTS_TABLE),
            category="Models",
            labels={"table": "all model results (tidy)"},
        ),
        tables=expand(
            out(models_plan.SUMMARY_TABLE),
            table=models_plan.summary_tables(),
            ext=["tsv", "md"],
        ),
        plots=[
            report(
                out(models_plan.NOISE_PLOT, ext="png"),
                category="Models",
                labels={"plot": "metrics per tokenizer, clean and noised"},
            ),
            out(models_plan.NOISE_PLOT, ext="pdf"),
        ],
    params:
        **step("tokstudy.models.study_tables:summarize_models"),
        out_dir=lambda w, output: folder(output.results),
        scores=models_plan.score_files(),
        predictions=finetune_plan.finetune_files(finetune_plan.FINETUNE_PREDICTIONS),
        clm=clm_plan.score_files(),
        evaluation=to_dict(models_section.config.evaluation),
    log:
        out(log_path("summarize_models")),
    threads: planners.threads("summarize_models")
    resources:
        **planners.resources("summarize_models"),
    script:
        RUN_STEP


rule model_outputs:
    input:
        models_plan.targets(),
