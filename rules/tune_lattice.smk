# Stage 4b: the tuning loop of the lattice tuners, lb-mert and lb-mira (Cherry & Foster 2012, §3.1, §4),
# the same path as rules/tune.smk with lattices in place of k-best lists: iteration it decodes the dev
# sub-sample to its whole search graph (--lattice-beam tuning.lattice_beam, 0 = unpruned: lb-mert's
# lattices; lb-mira prunes its own to 50 edges per reference word when it reads them) with the weights
# of it-1, and the tuner reads that lattice plus the paths aggregated by iterations 1..it-1
# (prev_paths; lb-mert keeps the paths on its line searches' upper envelopes, lb-mira its hope and fear
# paths) and writes the aggregation for it+1. A lattice is deleted once its iteration is tuned.


rule decode_dev_lattice:
    input:
        model=model_dir("{pair}", "{fs}", "model.yaml"),
        weights=prev_weights,
        src=dev_src,
        ref=dev_ref,
        moses=moses_system,
    output:
        lattice=temp(run_path("it{it}/dev.lattice.gz")),
        best=run_path("it{it}/dev.1best"),
        bleu=run_path("it{it}/dev.bleu.json"),
    wildcard_constraints:
        setting=HYPER_SETTING,
        method=methods_regex("lattice"),
    params:
        beam=lattice_beam(),
        search=decoder_options,
        bleu=bleu_options(),
    threads: 2
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("it{it}/decode.log"),
    benchmark:
        run_benchmark("it{it}/decode.tsv")
    resources:
        mem_mb=3000,
    shell:
        "(smtlib decode --model {input.model} --weights {input.weights} --input {input.src} "
        "--lattice {output.lattice} --lattice-beam {params.beam} --output {output.best} --jobs {threads} "
        "{params.search} "
        "&& smtlib bleu --refs {input.ref} --hyps {output.best} {params.bleu} > {output.bleu}.tmp "
        "&& mv {output.bleu}.tmp {output.bleu}) > {log} 2>&1"


rule tune_lattice:
    input:
        lattice=run_path("it{it}/dev.lattice.gz"),
        paths=prev_paths,
        ref=dev_ref,
        init=prev_weights,
    output:
        weights=run_path("it{it}/weights"),
        info=run_path("it{it}/tune.json"),
        paths=run_path("it{it}/paths.kbest.gz"),
    wildcard_constraints:
        setting=HYPER_SETTING,
        method=methods_regex("lattice"),
    params:
        paths=paths_option,
        settings=tune_settings,
        seed=tune_seed,
        bleu=bleu_options(),
    threads: lattice_tune_threads
    conda:
        "../envs/smtlib.yaml"
    log:
        run_log("it{it}/tune.log"),
    benchmark:
        run_benchmark("it{it}/tune.tsv")
    resources:
        mem_mb=6000,
    shell:
        "smtlib tune {wildcards.method} --lattice {input.lattice} {params.paths} --refs {input.ref} "
        "--init {input.init} --out {output.weights} --paths-out {output.paths} --info {output.info} "
        "--seed {params.seed} --jobs {threads} {params.settings} {params.bleu} > {log} 2>&1"
