localrules: summarize_models  # trivial jobs: not worth a cluster job


from tokstudy.study.models import CHARACTERBERT_CORPUS, PRETOKENIZED, TOKENIZER
from tokstudy.training.config import to_dict

# The model stage (config key models:): BERT MLM pretraining per (language, tokenizer, size,
# seed), MLM evaluation clean and noised, POS / sentence fine-tuning, statistics tables.
# CharacterBERT runs (models.characterbert) go through the same rules as tokenizer
# "characterbert": they have no tokenizer folder and their corpus comes from
# prepare_characterbert.
plan = planners.models


wildcard_constraints:
    seed=r"\d+",


rule silver_treebank:
    input:
        train=out("corpora/{language}/train.txt"),
        heldout=out("corpora/{language}/heldout.txt"),
    output:
        directory(out("models/treebanks/{language}/silver")),
    params:
        seed=study.seed,
    log:
        out("logs/silver_treebank/{language}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("silver_treebank")
    resources:
        **planners.resources("silver_treebank"),
    script:
        "../scripts/silver_treebank.py"


rule pretokenize_mlm:
    input:
        tokenizer=out(TOKENIZER),
        train=out("corpora/{language}/train.txt"),
    output:
        directory(out(PRETOKENIZED)),
    params:
        whole_word_mask=plan.config.pretrain.whole_word_mask,
    log:
        out("logs/pretokenize_mlm/{language}/{tokenizer}/{size}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("pretokenize_mlm")
    resources:
        **planners.resources("pretokenize_mlm"),
    script:
        "../scripts/pretokenize_mlm.py"


rule prepare_characterbert:
    input:
        train=out("corpora/{language}/train.txt"),
    output:
        directory(out(CHARACTERBERT_CORPUS)),
    params:
        config=plan.characterbert(),
    log:
        out("logs/prepare_characterbert/{language}/{size}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("prepare_characterbert")
    resources:
        **planners.resources("prepare_characterbert"),
    script:
        "../scripts/prepare_characterbert.py"


rule pretrain_mlm:
    input:
        tokenizer=plan.tokenizer_dir,
        corpus=plan.corpus_dir,
    output:
        directory(plan.run_path("pretrain")),
    params:
        config=lambda w: plan.seeded("pretrain", w.seed),
    log:
        out("logs/pretrain_mlm/{language}/{tokenizer}/{size}/seed{seed}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("pretrain_mlm")
    resources:
        **planners.resources("pretrain_mlm"),
    script:
        "../scripts/pretrain_mlm.py"


rule evaluate_mlm:
    input:
        tokenizer=plan.tokenizer_dir,
        pretrained=plan.run_path("pretrain"),
        heldout=out("corpora/{language}/heldout.txt"),
    output:
        metrics=plan.run_path("mlm.tsv"),
        edits=plan.run_path("mlm_noise_edits.tsv"),
    params:
        config=plan.evaluation(),
    log:
        out("logs/evaluate_mlm/{language}/{tokenizer}/{size}/seed{seed}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("evaluate_mlm")
    resources:
        **planners.resources("evaluate_mlm"),
    script:
        "../scripts/evaluate_mlm.py"


rule finetune_model:
    input:
        unpack(plan.finetune_data),
        tokenizer=plan.tokenizer_dir,
        pretrained=plan.run_path("pretrain"),
    output:
        metrics=plan.run_path("{task}/metrics.tsv"),
        predictions=plan.run_path("{task}/predictions.tsv"),
        summary=plan.run_path("{task}/finetune.json"),
    wildcard_constraints:
        task="pos|sentence",
    params:
        config=lambda w: plan.seeded("finetune", w.seed),
        noise_levels=plan.noise_levels(),
        noise_seed=plan.config.evaluation.noise_seed,
        noise_word_fraction=plan.config.evaluation.noise_word_fraction,
        sentence_feature=plan.config.sentence_feature,
        sentence_upos=list(plan.config.sentence_upos),
    log:
        out("logs/finetune_model/{language}/{tokenizer}/{size}/seed{seed}/{task}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("finetune_model")
    resources:
        **planners.resources("finetune_model"),
    script:
        "../scripts/finetune_model.py"


rule summarize_models:
    input:
        mlm=list(plan.mlm_files()),
        finetune=list(plan.finetune_files("metrics.tsv")),
        predictions=list(plan.finetune_files("predictions.tsv")),
    output:
        results=report(
            out("tables/models/results.tsv"),
            category="Models",
            labels={"table": "all model results (tidy)"},
        ),
        tables=expand(
            out("tables/models/{table}.{ext}"),
            table=plan.summary_tables(),
            ext=["tsv", "md"],
        ),
        png=report(
            out("plots/models/noise.png"),
            category="Models",
            labels={"plot": "metrics per tokenizer, clean and noised"},
        ),
        pdf=out("plots/models/noise.pdf"),
    params:
        mlm=plan.mlm_files(),
        finetune=plan.finetune_files("metrics.tsv"),
        predictions=plan.finetune_files("predictions.tsv"),
        evaluation=to_dict(plan.config.evaluation),
    log:
        out("logs/summarize_models.log"),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("summarize_models")
    resources:
        **planners.resources("summarize_models"),
    script:
        "../scripts/summarize_models.py"


rule model_outputs:
    input:
        planners.models.targets(),
