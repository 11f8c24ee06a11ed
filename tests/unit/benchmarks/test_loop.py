"""``benchmarks/loop.py``'s Table 4 estimate on synthetic rows and a synthetic plan (no decoding).

Every expected cost below is worked out by hand from the synthetic measurements and the cost model
of the module docstring (fixed part + per-sentence part, per rule), not read from the code's output.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
from tests.support.repo import REPO

CFG = {"subsample": {"prob": 0.9}}
# per feature set: loading (s), per-sentence CPU (s) of the short decodes, dense features
FACTORS = {
    "small": {"load": 1.0, "kbest_per_sentence": 0.01, "best_per_sentence": 0.005, "lattice_load": 1.0,
              "lattice_per_sentence": 0.04, "dense": 6},
    "medium": {"load": 2.0, "kbest_per_sentence": 0.02, "best_per_sentence": 0.01, "lattice_load": 2.0,
               "lattice_per_sentence": 0.08, "dense": 18},
    "big": {"load": 4.0, "kbest_per_sentence": 0.04, "best_per_sentence": 0.02, "lattice_load": 4.0,
            "lattice_per_sentence": 0.16, "dense": 18},
}


@pytest.fixture(scope="module")
def loop():
    spec = importlib.util.spec_from_file_location("loop_benchmark", REPO / "benchmarks" / "loop.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def row(method, rule, it, stage, cpu, sentences=100):
    return {"method": method, "rule": rule, "it": it, "stage": stage, "cpu": cpu, "wall": cpu, "peak_mib": 1.0,
            "sentences": sentences}


def decode(method, rule, it, per_sentence, sentences=100, load=2.0):
    """A decode's rows: its fixed part as loading (the Medium factor's), all of its per-sentence CPU in
    search, and its scoring."""
    return [row(method, rule, it, "load", load, sentences), row(method, rule, it, "options", 0.0, sentences),
            row(method, rule, it, "search", per_sentence * sentences, sentences),
            row(method, rule, it, "kbest", 0.0, sentences), row(method, rule, it, "write", 0.0, sentences),
            row(method, rule, it, "score", 1.0, sentences)]


def base_rows():
    """The shared first decode at twice the Medium short decode's rate (so every k-best decode costs 2x
    its short decode) and a score of 1 s (the small job)."""
    rows = decode("first", "decode_first", 1, 0.04)
    rows = [r for r in rows if r["stage"] != "score"]
    rows += [row("first", "first_sample", 1, "merge", 1.0 + 0.5), row("first", "first_sample", 1, "score", 1.0),
             row("first", "first_sample", 1, "merge", 1.0 + 0.5)]
    return rows


def plan(*jobs):
    out = {}
    for rule, wildcards in jobs:
        out.setdefault(rule, []).append(wildcards)
    return out


def run_wc(fs, method, it, sample=0):
    return f"pair=fr-en, fs={fs}, method={method}, setting=default, sample={sample}, it={it}"


def test_a_lattice_rule_costs_what_its_rows_say(loop):
    rows = base_rows()
    # lbmert measured on 100 sentences at iterations 1..3: tune 1 s (a Python start) + 0.1/0.2/0.3 s per sentence
    for it, per in ((1, 0.1), (2, 0.2), (3, 0.3)):
        rows += decode("lbmert", "decode_dev_lattice", it, 0.16)  # twice the short lattice decode's rate
        rows.append(row("lbmert", "tune_lattice", it, "tune", 1.0 + per * 100))
    jobs = plan(("decode_dev_lattice", run_wc("medium", "lbmert", 1)),
                ("decode_dev_lattice", run_wc("small", "lbmert", 1, sample=1)),
                ("tune_lattice", run_wc("medium", "lbmert", 3)),
                ("tune_lattice", run_wc("medium", "lbmert", 5)),
                ("tune_lattice", run_wc("small", "lbmert", 2, sample=3)))
    est = loop.estimate(jobs, rows, FACTORS, 0.0, 1000, 1000, CFG)
    # medium: 2 threads x 2 s loading + 1000 x 0.16 + a score; small sub-sample: 2 x 1 + 900 x 0.08 + 1
    assert est.per_rule["decode_dev_lattice"] == pytest.approx((4 + 160 + 1) + (2 + 72 + 1))
    # it 3 measured (0.3/sentence); it 5: +0.1 per iteration from it 2..3 -> 0.5; small it 2 (a sub-sample
    # of 900 sentences): 0.2 x 6/18
    expected = (1 + 1000 * 0.3) + (1 + 1000 * 0.5) + (1 + 900 * 0.2 * 6 / 18)
    assert est.per_rule["tune_lattice"] == pytest.approx(expected)
    assert not est.incomplete
    assert any("lbmert" in n and "extrapolated linearly from iterations 2..3" in n for n in est.notes)


def test_one_growing_iteration_is_a_stated_lower_bound(loop):
    rows = base_rows()
    for it, per in ((1, 0.1), (2, 0.2)):
        rows += decode("lbmira", "decode_dev_lattice", it, 0.16)
        rows.append(row("lbmira", "tune_lattice", it, "tune", 1.0 + per * 100))
    jobs = plan(("tune_lattice", run_wc("big", "lbmira", 15)))
    est = loop.estimate(jobs, rows, FACTORS, 0.0, 1000, 1000, CFG)
    assert est.per_rule["tune_lattice"] == pytest.approx(1 + 1000 * 0.2)  # lb-mira: Medium's on Big
    assert any("lbmira" in n and "LOWER BOUND" in n for n in est.notes)


def test_an_unmeasured_method_is_flagged_not_borrowed(loop):
    rows = base_rows()
    rows += decode("kbmira", "decode_dev", 2, 0.04)
    rows += [row("kbmira", "tune_first", 1, "tune", 1.0 + 10.0), row("kbmira", "tune", 2, "merge", 1.0 + 20.0),
             row("kbmira", "tune", 2, "tune", 1.0 + 30.0)]
    jobs = plan(("tune", run_wc("medium", "kbmira", 2)), ("tune_lattice", run_wc("medium", "lbmert", 2)),
                ("tune", run_wc("medium", "mert", 2)), ("mira_shard", run_wc("medium", "mira", 1) + ", shard=0"),
                ("mira_mix", run_wc("medium", "mira", 1)))
    est = loop.estimate(jobs, rows, FACTORS, 0.0, 1000, 1000, CFG)
    # kbmira's job (two commands + 0.5 s per sentence); mert's only its two commands' start: no borrowing
    assert est.per_rule["tune"] == pytest.approx((2 + 1000 * 0.5) + 2)
    assert est.per_rule["tune_lattice"] == pytest.approx(1.0)  # the small job only
    assert est.per_rule["mira_mix"] == 0.0
    assert set(est.incomplete) == {"lbmert not measured", "mert not measured", "mira not measured"}
    assert sum("NOT MEASURED" in n for n in est.notes) == 3


def test_online_mira_shards_and_mixing(loop):
    rows = base_rows()
    for it in (1, 2):
        # 4 shards of 25 sentences: fixed 3 s (a one-sentence shard job) + 0.05 s per sentence; mixing 1.5 s
        rows += [row("mira", "mira_shard", it, "tune", 3.0 + 0.05 * 25, 25) for _ in range(4)]
        rows.append(row("mira", "mira_mix", it, "merge", 1.5))
    jobs = plan(*[("mira_shard", run_wc("big", "mira", 9) + f", shard={k}") for k in range(4)],
                ("mira_mix", run_wc("big", "mira", 9)), ("decode_dev", run_wc("medium", "mira", 3)))
    factors = {**FACTORS, "medium": {**FACTORS["medium"], "shard_load": 3.0}}
    est = loop.estimate(jobs, rows, factors, 0.0, 1000, 1000, CFG)
    # big: 3 s fixed + (4 - 2) s more loading than Medium + 250 sentences x 0.05 x (Big's short decode /
    # Medium's = 2), per shard
    assert est.per_rule["mira_shard"] == pytest.approx(4 * (3 + 2 + 250 * 0.05 * 2))
    assert est.per_rule["mira_mix"] == pytest.approx(1.5)
    # decode_dev: 2 threads x 2 s + 1000 x 0.02 x (measured 0.04 / short 0.02) + a score
    assert est.per_rule["decode_dev"] == pytest.approx(4 + 40 + 1)
    assert not est.incomplete


def test_an_unknown_rule_is_reported_and_known_small_ones_listed(loop, capsys):
    rows = base_rows()
    jobs = plan(("decode_dev_moses", run_wc("medium", "kbmira", 2)), ("select_best", run_wc("medium", "kbmira", 1)),
                ("decode_first", "pair=fr-en, fs=medium"))
    est = loop.estimate(jobs, rows, FACTORS, 0.0, 1000, 1000, CFG)
    assert est.per_rule["decode_first"] == pytest.approx(4 + 40)
    assert est.incomplete == ["rule decode_dev_moses not costed"]
    assert any(n.startswith("UNKNOWN rule decode_dev_moses (1 jobs)") for n in est.notes)
    assert any(n.startswith("small jobs") and "select_best" in n for n in est.notes)
    assert "UNKNOWN rule decode_dev_moses" in capsys.readouterr().err


def test_rows_round_trip_and_combine(loop, tmp_path):
    earlier = base_rows() + [row("lbmert", "tune_lattice", 1, "tune", 3.25)]
    path = tmp_path / "rows.tsv"
    loop.write_rows(path, earlier, "a")
    back = loop.read_rows(path)
    assert [(r["method"], r["rule"], r["it"], r["stage"], r["cpu"], r["sentences"]) for r in back] == \
        [(r["method"], r["rule"], r["it"], r["stage"], r["cpu"], r["sentences"]) for r in earlier]
    now = base_rows() + [row("lbmert", "tune_lattice", 1, "tune", 9.0), row("kbmira", "tune_first", 1, "tune", 2.0)]
    combined, notes = loop.combine_rows(now, back + [row("mert", "tune_first", 1, "tune", 5.0)])
    assert [r["cpu"] for r in combined if r["method"] == "lbmert"] == [9.0]  # measured here: replaces
    assert [r["cpu"] for r in combined if r["method"] == "mert"] == [5.0]
    assert sum(r["method"] == "first" for r in combined) == 2 * len(base_rows())
    assert any("lbmert" in n and "dropped" in n for n in notes)


def test_decode_phases_split_the_write_from_the_loading(loop):
    line = "decode: 30 sentences in 2.1 s (14.1 sent/s), model loaded in 0.4 s, options 0.1 s, search 0.4 s, kbest 0.2 s"
    ph = loop.decode_phases(line, 3.1)
    assert ph == pytest.approx({"load": 0.4, "options": 0.1, "search": 0.4, "kbest": 0.2, "write": 2.0})
    assert sum(ph.values()) == pytest.approx(3.1)


def test_rows_of_the_earlier_loop_py_are_read_with_their_sentences(loop, tmp_path):
    path = tmp_path / "old.tsv"
    path.write_text("label\tmethod\tit\tstage\tcpu\twall\tpeak_mib\n"
                    "x\tfirst\t1\tload\t5.000\t5.0\t1\nx\tfirst\t1\tsearch\t20.000\t20.0\t1\n"
                    "x\tfirst\t1\tmerge\t3.000\t3.0\t1\nx\tkbmira\t1\ttune\t4.000\t4.0\t1\n"
                    "x\tkbmira\t2\tload\t6.000\t6.0\t1\nx\tkbmira\t2\tscore\t1.000\t1.0\t1\n"
                    "x\tkbmira\t2\tmerge\t2.000\t2.0\t1\nx\tkbmira\t2\ttune\t7.000\t7.0\t1\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="--legacy-sentences"):
        loop.read_rows(path)
    rows = loop.read_rows(path, 1014)
    assert [(r["method"], r["it"], r["stage"], r["rule"]) for r in rows] == [
        ("first", 1, "load", "decode_first"), ("first", 1, "search", "decode_first"),
        ("first", 1, "merge", "first_sample"), ("kbmira", 1, "tune", "tune_first"),
        ("kbmira", 2, "load", "decode_dev"), ("kbmira", 2, "score", "decode_dev"),
        ("kbmira", 2, "merge", "tune"), ("kbmira", 2, "tune", "tune")]
    assert {r["sentences"] for r in rows} == {1014}


def test_a_configfile_is_merged_over_the_workflow_config(loop, tmp_path):
    base = loop.workflow_config()
    for search, pop, expected in (("cube", 7, ["--search", "cube", "--pop-limit", "7"]), ("stack", 7, [])):
        overlay = tmp_path / f"{search}.yaml"
        overlay.write_text(f"decoder: {{search: {search}, pop_limit: {pop}}}\ntuning: {{iterations: 3}}\n"
                           "methods: [mert]\n", encoding="utf-8")
        cfg = loop.workflow_config(overlay)
        assert cfg["decoder"]["search"] == search and cfg["decoder"]["pop_limit"] == pop
        # keys the overlay does not name keep the workflow's values, as snakemake --configfile merges
        assert cfg["decoder"]["stack_size"] == base["decoder"]["stack_size"]
        assert cfg["tuning"]["k"] == base["tuning"]["k"] and cfg["tuning"]["iterations"] == 3
        assert cfg["methods"] == ["mert"]
        options = loop.decoder_options(cfg)
        assert options[:2] == ["--stack-size", str(base["decoder"]["stack_size"])] and options[6:] == expected


def test_the_measured_commands_are_the_ones_snakemake_plans(loop):
    """The loop runs the rules' own commands (``snakemake -n -p``), chained as each job chains them, in
    the order their inputs allow, with one decoding process; a method's iterations and a tuner's shards
    come from the plan, not from a copy of the rules."""
    if not loop.SHARED.is_dir():
        pytest.skip("../shared/data is not available (the dry run's data_dir)")
    cfg = loop.workflow_config(REPO / "config" / "tiny.yaml")
    cfg["method_settings"]["mira"] = {"shards": 2}
    jobs = loop.planned_loop(cfg, {"kbmira": 2, "lbmira": 1, "mira": 1})

    def its(method, rule):
        return sorted(int(j.wildcards["it"]) for j in jobs if j.rule == rule and j.wildcards.get("method") == method)

    assert its("kbmira", "tune_first") == [1] and its("kbmira", "tune") == [2] and its("kbmira", "decode_dev") == [2, 3]
    assert its("lbmira", "decode_dev_lattice") == [1, 2] and its("lbmira", "tune_lattice") == [1]
    assert its("mira", "mira_shard") == [1, 1] and its("mira", "mira_mix") == [1] and its("mira", "decode_dev") == [2]
    assert {j.wildcards["sample"] for j in jobs if j.rule == "first_sample"} == {"0"}
    assert {j.wildcards["fs"] for j in jobs} == {"medium"}

    first = next(j for j in jobs if j.rule == "first_sample")
    cmds = loop.job_commands(first, 30)
    assert [c.stage for c in cmds] == ["merge", "score", "rename", "merge"]
    assert cmds[1].stdout == "results/tune/fr-en/medium/first/s0/dev.bleu.json.tmp"
    assert cmds[2].argv == ["mv", cmds[1].stdout, cmds[1].stdout.removesuffix(".tmp")]
    for job in jobs:
        for c in loop.job_commands(job, 30):
            assert not any(a.startswith("logs/") for a in c.argv)  # the log redirection is dropped
            if c.stage == "decode":
                assert c.argv[c.argv.index("--jobs") + 1] == "1"
                search = loop.decoder_options(cfg)  # the workflow's search options, from smtlib.workflow
                at = c.argv.index("--stack-size")
                assert c.argv[at:at + len(search)] == search
    order = [(j.rule, j.wildcards["it"]) for j in loop.loop_order([j for j in jobs if j.wildcards.get("method") == "mira"])]
    assert order == [("mira_shard", "1"), ("mira_shard", "1"), ("mira_mix", "1"), ("decode_dev", "2")]
