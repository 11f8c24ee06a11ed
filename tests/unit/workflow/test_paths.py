"""smtlib.workflow.paths: the patterns and the paths built from values agree."""

from smtlib.workflow import paths


def test_a_run_directory_is_its_pattern_filled_in():
    assert paths.run_dir("fr-en", "medium", "kbmira", "C=0.01", 3) == "results/tune/fr-en/medium/kbmira/C=0.01/s3"
    assert paths.run_path("it{it}/weights").format(pair="p", fs="f", method="m", setting="s", sample=0, it=2) == \
        "results/tune/p/f/m/s/s0/it2/weights"


def test_logs_and_benchmarks_mirror_the_results_tree():
    assert paths.run_log("it{it}/decode.log") == "logs/tune/{pair}/{fs}/{method}/{setting}/s{sample}/it{it}/decode.log"
    assert paths.run_benchmark("x.tsv") == "results/benchmarks/tune/{pair}/{fs}/{method}/{setting}/s{sample}/x.tsv"
    assert paths.first_log("decode.log") == "logs/tune/{pair}/{fs}/first/decode.log"
    assert paths.first_benchmark("decode.tsv") == "results/benchmarks/tune/{pair}/{fs}/first/decode.tsv"


def test_the_first_decode_is_shared_per_system_and_cut_per_sample():
    assert paths.first_dir("fr-en", "small", 2) == "results/tune/fr-en/small/first/s2"
    assert paths.first_path("s{sample}/dev.pool").format(pair="fr-en", fs="small", sample=2) == \
        paths.first_dir("fr-en", "small", 2) + "/dev.pool"


def test_system_and_data_files():
    assert paths.model_dir("ja-en", "big") == "results/systems/ja-en/big"
    assert paths.initial_weights("ja-en", "big") == "results/systems/ja-en/big/init.weights"
    assert paths.work_path("ja-en", "lm.0.json") == "results/systems/ja-en/work/lm.0.json"
    assert paths.data_path("de-en") == "results/data/de-en"
    assert paths.data_path("de-en", "dev/s1.ids") == "results/data/de-en/dev/s1.ids"


def test_replay_files_are_flattened_under_one_directory():
    assert paths.replay_file("data/run3.NBEST.out") == "results/replay/data/data_run3.NBEST.out.gz"
    assert paths.replay_file("moses.ini") == "results/replay/data/moses.ini.gz"
    flat = [paths.replay_file(n) for n in paths.REPLAY_NAMES]
    assert len(set(flat)) == len(flat)
