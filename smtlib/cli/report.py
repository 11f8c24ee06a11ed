"""Tables, companions and figures of the workflow, in the layout of Cherry & Foster (2012).

    smtlib report best --dev-bleu B0 .. BN --weights W0 .. WN --out-weights W --out-curve C [--meta k=v ..]
                       [--metric METRIC --dev-score S0 .. SN ..]
    smtlib report summary --curve C --test NAME=BLEU.json [NAME=SCORE.json ..] .. --out S.json
    smtlib report table --summaries S .. --methods M .. --feature-sets F .. --out T.tsv --companion T.md
                        [--not-applicable METHOD:FS ..] [--settings JSON] [--title TEXT]
                        [--test-refs NAME=REF .. --outputs HYP .. --tests T.json [--pairs all|best]
                         [--against METHOD] [--ar-shuffles N] [--boot-samples N] [--seed N]
                         [--tokenize T] [--lowercase]]
    smtlib report metric-matrix --run TUNING_METRIC=SUMMARY .. --out T.tsv
    smtlib report curves --curves C .. --out PNG --tsv TSV [--title TEXT]
    smtlib report figure1 --summaries S .. --out PNG --tsv TSV
    smtlib report replay --truth results.dat[.gz] --score METHOD:IT:BLEU.json .. --out T.tsv [--figure PNG]
    smtlib report paper --table T.tsv --paper table4 --out T_vs_paper.tsv [--tests T.json --findings F.md]
    smtlib report pro-mert --dims D .. --reps R --methods M .. --out T.tsv --figure PNG
    smtlib report test-curve --curve C --test NAME=BLEU.json .. --out T.tsv
    smtlib report stability --curves T .. --methods M .. --out F.md --tsv R.tsv --figure PNG
                            [--drop BLEU] [--permutations N] [--seed N]
    smtlib report cmira --summaries S .. --outputs HYP .. --test-refs NAME=REF .. --tune-info J ..
                        --benchmarks B .. [--restored-steps J ..] --out F.md --tsv C.tsv
                        [--ar-shuffles N] [--boot-samples N] [--seed N] [--tokenize T] [--lowercase]

``best`` keeps the weights with the best dev BLEU of a tuning loop (§4: "return the weights that
achieve the best development BLEU score"; ties go to the earliest iteration) and writes the learning
curve; a run tuned toward another metric (``--metric``, with that metric's dev scores) keeps the
weights best in it, the lowest TER for TER, and its curve has those scores too. ``summary`` gathers one run's tune and test scores (BLEU, and any other metric's ``smtlib score``
results of its test sets). ``table`` averages runs as §5 does: Tune
and Test averaged over the dev sub-samples (Test also over the test sets), SD = the sample standard
deviation (n-1) across sub-samples of the per-run test average; ``n/a`` where a method does not apply,
``-`` where a statistic is undefined (SD of a single run). Given the runs' test outputs (``--outputs``:
for each summary in order, its 1-best output of each test set in ``--test-refs`` order), it also
tests every cell against its column's best (stratified approximate randomization over the runs,
Clark et al. 2011, :mod:`smtlib.report.significance`), marks the cells (``<set> Sig``: ``best``,
``*`` significantly worse, ``=`` tied, ``(*)``/``(=)`` with one run per cell: across sentences only),
gives p, s_sel and s_opt in the companion and writes every test to ``--tests`` (JSON).
``paper`` sets the table next to the paper's: for each pair of methods the paper orders in a column,
whether ours orders them alike and, with ``--tests``, whether our difference is significant;
``--findings`` decides the paper's §5 findings (:mod:`smtlib.report.claims`): run-level paired tests over
the dev sub-samples, Holm-corrected over the file, three-way verdicts (holds / does not hold /
inconclusive), the sentence-level p of the tests beside them.
``metric-matrix`` is the tune-on-X / evaluate-on-Y matrix of a sweep over tuning metrics
(:mod:`smtlib.report.matrix`). ``figure1`` draws tune and test BLEU against each method's regularization setting (Figure 1).
``replay`` sets the methods' BLEU on Moses's recorded n-best lists next to the best BLEU Moses's MERT
recorded per iteration.
``pro-mert`` is Hopkins & May's (2011) synthetic experiment (Figure 3).
``test-curve`` adds to a run's learning curve the test BLEU of every iteration's weights (each test
set's ``smtlib bleu`` results of the weights 0..N, in order); ``stability`` sets the test curves of
seed-only replicas against PRO's: the SD of the final test BLEU (F-test) and the test BLEU lost in
drops (exact permutation test), Holm-corrected, three-way verdicts beside Hopkins & May's (2011)
Figures 5 and 6, a table of the replicas and a figure (:mod:`smtlib.report.stability`).
``cmira`` decides Tan et al.'s (2013) claims on a table's runs of cmira, kb-mira and kb-mert (run-level
paired tests with the sentence-level AR p beside them) and sets their parameter updates and CPU
seconds per tuning step, read from each step's ``--info`` JSON and benchmark file, beside the paper's
Tables 2 and 4 (:mod:`smtlib.report.cmira`).
BLEU JSON files are the output of ``smtlib bleu`` (sacrebleu-equal corpus BLEU with its signature).
The computations live in :mod:`smtlib.report`; this module parses options, calls them and writes
every output atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from smtlib.cli.common import add_bleu_options
from smtlib.errors import InputError
from smtlib.io import atomic_output, open_text
from smtlib.values import integer_at_least, positive_float


def _write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_output(path) as out:
        out.write(text)


def _pairs(items: list[str] | None, sep: str, option: str, form: str) -> list[tuple[str, str]]:
    """``A<sep>B`` option values split once at ``sep``; anything else is an InputError."""
    out = []
    for item in items or []:
        if sep not in item:
            raise InputError(f"{option} expects {form}, got {item!r}")
        out.append(tuple(item.split(sep, 1)))
    return out


def cmd_best(args: argparse.Namespace) -> int:
    from smtlib.report.runs import best_iteration, best_weights_header, format_curve, read_bleu, read_score, tuning_scores

    if len(args.dev_bleu) != len(args.weights):
        raise InputError(f"{len(args.dev_bleu)} dev BLEU files for {len(args.weights)} weight files "
                         "(give the BLEU of decoding with weights 0..N, in order)")
    if args.dev_score and args.metric == "bleu":
        raise InputError("--dev-score needs --metric, the tuning metric the scores are of")
    results = [read_bleu(p) for p in args.dev_bleu]
    tuning = None
    if args.metric != "bleu":
        tuning = tuning_scores(args.metric, results, [read_score(p) for p in args.dev_score or []])
        best = best_iteration(list(tuning.values), tuning.higher_is_better)
    else:
        best = best_iteration([r["score"] for r in results])
    meta = dict(_pairs(args.meta, "=", "--meta", "key=value"))
    with open_text(args.weights[best], what="weights") as src, atomic_output(args.out_weights) as out:
        out.write(best_weights_header(results, best, tuning))
        out.write(src.read())
    _write_text(args.out_curve, format_curve(results, best, meta, tuning))
    kept = "" if tuning is None else f"best dev {tuning.metric} {tuning.values[best]:.2f} ({tuning.better} is better), "
    print(f"{kept}best dev BLEU {results[best]['score']:.2f} at iteration {best}", file=sys.stderr)
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    from smtlib.report.runs import read_curve, read_score, run_summary

    curve = read_curve(args.curve)
    tests: dict[str, dict] = {}
    others: dict[str, dict[str, dict]] = {}
    for name, path in _pairs(args.test, "=", "--test", "NAME=FILE"):
        metric, result = read_score(path)
        results = tests if metric == "bleu" else others.setdefault(metric, {})
        if name in results:
            raise InputError(f"--test {name}: two {metric} results", path)
        results[name] = result
    summary = run_summary(curve, tests, others)
    if args.expect:
        from smtlib.report.restore import check_restored, read_record

        check_restored(summary, read_record(args.expect))
    with atomic_output(args.out) as out:
        json.dump(summary, out, indent=2, sort_keys=True)
        out.write("\n")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    from smtlib.report.restore import check_settings, read_record, restored_curve, restored_steps, restored_weights
    from smtlib.weights import write_weights

    meta = dict(_pairs(args.meta, "=", "--meta", "key=value")) if args.meta else None
    record = read_record(args.record, meta)
    checked = check_settings(record, _tuner_params(record["method"], args.set), args.record)
    weights, header = restored_weights(record)
    write_weights(args.out_weights, weights, header=header)
    _write_text(args.out_curve, restored_curve(record))
    if args.out_steps:
        _write_text(args.out_steps, json.dumps(restored_steps(record), indent=1, sort_keys=True) + "\n")
    settings = f"settings of {checked} steps checked" if checked else "no tuning step in the record names its settings"
    print(f"restored {args.record}: best dev BLEU {record['tune']:.2f} at iteration {record['best_iteration']}, "
          f"{len(weights)} weights; {settings}", file=sys.stderr)
    return 0


def _tuner_params(method: str, items: list[str] | None) -> dict | None:
    """The hyper-parameters ``smtlib tune METHOD --set ITEMS`` runs with (the defaults under them), or
    None for a method that is not one of ``smtlib tune``'s, whose settings cannot be known here."""
    from smtlib.cli.common import parse_assignments
    from smtlib.tuners.registry import get_tuner_class, list_tuners

    if method not in list_tuners():
        if items:
            raise InputError(f"--set: {method!r} is not a method of smtlib tune, whose settings could be checked")
        return None
    return get_tuner_class(method)(**parse_assignments(items)).params


def _test_outputs(args: argparse.Namespace, runs: list[dict]) -> tuple[dict[str, list[str]], list[dict[str, str]]]:
    """``--test-refs`` as test set -> reference files (a name given again adds a reference set), and
    ``--outputs`` as one {test set: file} per run (each run's files in the test sets' order)."""
    refs: dict[str, list[str]] = {}
    for name, path in _pairs(args.test_refs, "=", "--test-refs", "NAME=REF"):
        refs.setdefault(name, []).append(path)
    if not refs:
        raise InputError("--outputs needs --test-refs NAME=REF for each test set")
    names = list(refs)
    if len(args.outputs) != len(runs) * len(names):
        raise InputError(f"--outputs has {len(args.outputs)} files for {len(runs)} summaries x {len(names)} test sets "
                         f"({', '.join(names)}): give each summary's outputs, in order, one per test set")
    per_run = [dict(zip(names, args.outputs[i * len(names):(i + 1) * len(names)])) for i in range(len(runs))]
    return refs, per_run


def _initial_scores(items: list[str] | None) -> dict[str, dict[str, dict]]:
    """``--initial FEATURE_SET:TEST_SET=BLEU_JSON`` as feature set -> test set -> BLEU result."""
    from smtlib.report.runs import read_bleu

    scores: dict[str, dict[str, dict]] = {}
    for key, path in _pairs(items, "=", "--initial", "FEATURE_SET:TEST_SET=BLEU_JSON"):
        fs, sep, test_set = key.partition(":")
        if not sep or not fs or not test_set:
            raise InputError(f"--initial expects FEATURE_SET:TEST_SET=BLEU_JSON, got {key}={path}")
        if test_set in scores.setdefault(fs, {}):
            raise InputError(f"--initial {fs}:{test_set} given twice")
        scores[fs][test_set] = read_bleu(path)
    return scores


def cmd_table(args: argparse.Namespace) -> int:
    from smtlib.report.runs import read_summaries
    from smtlib.report.tables import aggregate, check_runs_in_table, companion, format_tsv, table_rows

    if bool(args.outputs) != bool(args.tests) or (args.test_refs and not args.outputs):
        raise InputError("--outputs, --test-refs and --tests go together "
                         "(the test of each cell against its column's best)")
    if args.against is not None and not args.outputs:
        raise InputError("--against needs --outputs, --test-refs and --tests (it is a test of the cells)")
    runs = read_summaries(args.summaries)
    not_applicable = set(_pairs(args.not_applicable, ":", "--not-applicable", "METHOD:FEATURE_SET"))
    check_runs_in_table(runs, args.methods, args.feature_sets)
    cells = aggregate(runs)
    tests = None
    if args.outputs:
        from smtlib.bleu.replicas import Layout
        from smtlib.cli.common import bleu_settings
        from smtlib.report.significance import TestOptions, run_statistics, signature, table_tests

        if args.against is not None and args.against not in args.methods:
            raise InputError(f"--against {args.against}: not one of --methods")
        options = TestOptions(args.ar_shuffles, args.boot_samples, args.seed, args.pairs, args.against)
        refs, outputs = _test_outputs(args, runs)
        settings, layout = bleu_settings(args), Layout.of(["bleu"])
        stats = run_statistics(runs, outputs, refs, settings, layout)
        tests = table_tests(runs, stats, cells, args.methods, args.feature_sets, not_applicable, layout, options)
        tests["signature"] = signature(settings, len(next(iter(refs.values()))), options)
        tests["test_sets"] = list(refs)
    marks = None if tests is None else {(c["method"], c["feature_set"]): c["mark"] for c in tests["cells"]}
    against = None
    if tests is not None and "against" in tests:
        against = (tests["against"], {(c["method"], c["feature_set"]): c["mark"] for c in tests["against_cells"]})
    header, rows = table_rows(cells, args.methods, args.feature_sets, not_applicable, marks, against)
    settings = json.loads(args.settings) if args.settings else {}
    title = args.title or os.path.basename(args.out)
    initial = _initial_scores(args.initial)
    text = companion(runs, cells, header, rows, args.methods, args.feature_sets, title, settings, tests, initial)
    if tests is not None:
        with atomic_output(args.tests) as out:
            json.dump({"title": title, **tests}, out, indent=1, sort_keys=True)
            out.write("\n")
    _write_text(args.out, format_tsv(header, rows))
    _write_text(args.companion, text)
    return 0


def cmd_metric_matrix(args: argparse.Namespace) -> int:
    from smtlib.bleu.metrics import parse_mixture
    from smtlib.report.matrix import format_matrix, matrix_rows
    from smtlib.report.runs import read_summaries

    runs = []
    for metric, path in _pairs(args.run, "=", "--run", "TUNING_METRIC=SUMMARY"):
        parse_mixture(metric)  # a name or mixture smtlib tune --metric takes
        runs.append((metric, read_summaries([path])[0]))
    _write_text(args.out, format_matrix(*matrix_rows(runs)))
    return 0


def cmd_curves(args: argparse.Namespace) -> int:
    from smtlib.report.curves import format_curves, plot_curves
    from smtlib.report.figures import save_figure
    from smtlib.report.runs import read_curve

    curves = [read_curve(p) for p in args.curves]
    _write_text(args.tsv, format_curves(curves))
    save_figure(plot_curves(curves, args.title), args.out)
    return 0


def cmd_figure1(args: argparse.Namespace) -> int:
    from smtlib.report.figures import save_figure
    from smtlib.report.runs import read_summaries
    from smtlib.report.sweep import format_sweep, plot_sweep, sweep_points

    points = sweep_points(read_summaries(args.summaries))
    _write_text(args.tsv, format_sweep(points))
    save_figure(plot_sweep(points, args.title), args.out)
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from smtlib.report.figures import save_figure
    from smtlib.report.replay import format_replay, plot_replay, read_moses_results, replay_rows
    from smtlib.report.runs import read_bleu

    truth = read_moses_results(args.truth)
    scores: dict[str, dict[int, float]] = {}
    signatures = set()
    for item in args.score:
        parts = item.split(":", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            raise InputError(f"--score expects METHOD:ITERATION:FILE, got {item!r}")
        result = read_bleu(parts[2])
        scores.setdefault(parts[0], {})[int(parts[1])] = result["score"]
        signatures.add(result.get("signature", ""))
    header, rows = replay_rows(scores, truth)
    _write_text(args.out, format_replay(header, rows, signatures))
    if args.figure:
        save_figure(plot_replay(scores, truth), args.figure)
    return 0


def cmd_paper(args: argparse.Namespace) -> int:
    from smtlib.report.paper import (check_tests_match, format_orderings, orderings, paper_table, read_our_table,
                                     read_tests)

    if args.findings and not args.tests:
        raise InputError("--findings needs --tests (the table's tests, `smtlib report table --tests`)")
    ours, paper = read_our_table(args.table), paper_table(args.paper)
    tests = None
    if args.tests:
        tests = read_tests(args.tests)
        check_tests_match(ours, tests, args.table)
    name = os.path.basename(args.table)
    findings = None
    if args.findings:
        from smtlib.report.claims import evaluate, format_findings

        findings = format_findings(evaluate(tests, paper), name.removesuffix(".tsv"), args.paper, tests, ours, paper)
    _write_text(args.out, format_orderings(orderings(ours, paper, tests), name, args.paper, tests))
    if findings is not None:
        _write_text(args.findings, findings)
    return 0


def cmd_pro_mert(args: argparse.Namespace) -> int:
    from smtlib.report.figures import save_figure
    from smtlib.report.pro_mert import DIMS, METHODS, describe, format_trials, plot_trials, run_experiment

    trials = run_experiment(args.dims or list(DIMS), args.reps, args.methods or list(METHODS),
                            progress=lambda t: print(describe(t), file=sys.stderr, flush=True))
    _write_text(args.out, format_trials(trials))
    save_figure(plot_trials(trials), args.figure, tight=False)
    return 0


def cmd_test_curve(args: argparse.Namespace) -> int:
    from smtlib.report.runs import read_bleu, read_curve
    from smtlib.report.stability import curve_with_tests, format_test_curve

    tests: dict[str, list[dict]] = {}
    for name, path in _pairs(args.test, "=", "--test", "NAME=BLEU_JSON"):
        tests.setdefault(name, []).append(read_bleu(path))
    rows, names = curve_with_tests(read_curve(args.curve), tests)
    _write_text(args.out, format_test_curve(rows, names))
    return 0


def cmd_stability(args: argparse.Namespace) -> int:
    from smtlib.report.figures import save_figure
    from smtlib.report.stability import (compare, format_findings, format_replicas, group_replicas,
                                         plot_stability, read_test_curve, replica_measures)

    replicas = [replica_measures(read_test_curve(p), args.drop) for p in args.curves]
    groups = group_replicas(replicas, args.methods)
    comparisons = compare(groups, args.permutations, args.seed)
    text = format_findings(groups, comparisons, args.drop, args.permutations, args.seed)
    _write_text(args.tsv, format_replicas(groups))
    save_figure(plot_stability(groups), args.figure)
    _write_text(args.out, text)
    return 0


def cmd_cmira(args: argparse.Namespace) -> int:
    import numpy as np

    from smtlib.bleu.replicas import Layout
    from smtlib.cli.common import bleu_settings
    from smtlib.io import read_json
    from smtlib.report.cmira import (Step, cells, cost_rows, decide, format_costs, format_findings,
                                     read_step_benchmark, step_updates)
    from smtlib.report.publish import this_machine
    from smtlib.report.runs import read_summaries
    from smtlib.report.significance import TestOptions, run_statistics, signature

    runs = read_summaries(args.summaries)
    by_cell = cells(runs)
    restored = _restored_steps(args.restored_steps or [], runs)
    tuned = [r for r in runs if id(r) not in restored]
    expected = sum(int(r["iterations"]) for r in tuned)
    for option, files in (("--tune-info", args.tune_info), ("--benchmarks", args.benchmarks)):
        if len(files) != expected:
            raise InputError(f"{option} has {len(files)} files for {len(tuned)} runs tuned here, of {expected} tuning "
                             "steps in all: give each such summary's steps, in order, one per iteration")
    steps, machine = [], this_machine()  # the steps tuned here: this directory's machine (publish.this_machine)
    for run, first in zip(tuned, np.cumsum([0] + [int(r["iterations"]) for r in tuned])):
        for it in range(1, int(run["iterations"]) + 1):
            path = args.tune_info[first + it - 1]
            info = read_json(path, "tuning step --info")
            if info.get("method") != run["method"]:
                raise InputError(f"the --info of a {info.get('method')} step, given for a {run['method']} run "
                                 f"({run['_path']}): give each summary's steps, in order", path)
            bench = read_step_benchmark(args.benchmarks[first + it - 1])
            steps.append(Step(run["method"], run["fs"], str(run["sample"]), it, *step_updates(info, path),
                              bench["cpu_extrapolated"], bench["s"], machine))
    for run in runs:
        steps += restored.get(id(run), [])
    refs, outputs = _test_outputs(args, runs)
    settings, layout = bleu_settings(args), Layout.of(["bleu"])
    options = TestOptions(args.ar_shuffles, args.boot_samples, args.seed)
    stats = run_statistics(runs, outputs, refs, settings, layout)
    index = {id(r): i for i, r in enumerate(runs)}
    cell_stats = {key: np.stack([stats[index[id(r)]] for r in cell.values()]) for key, cell in by_cell.items()}
    comparisons = decide(by_cell, cell_stats, layout, options)
    rows = cost_rows(steps)
    title = args.title or os.path.basename(args.out).removesuffix(".md")
    text = format_findings(title, comparisons, rows, signature(settings, len(next(iter(refs.values()))), options))
    _write_text(args.tsv, format_costs(rows))
    _write_text(args.out, text)
    return 0


def _restored_steps(paths: list[str], runs: list[dict]) -> dict[int, list]:
    """``smtlib report restore --out-steps`` files, each matched to its run among ``runs`` by identity:
    ``{id(run): [Step, ...]}`` (:class:`smtlib.report.cmira.Step`, costs from the record's benchmarks)."""
    from smtlib.io import read_json
    from smtlib.report.cmira import Step, step_updates
    from smtlib.report.publish import unsampled_cpu
    from smtlib.report.runs import META_KEYS

    by_meta = {tuple(str(r[k]) for k in META_KEYS): r for r in runs}
    out: dict[int, list] = {}
    for path in paths:
        data = read_json(path, "restored tuning steps")
        run = by_meta.get(tuple(str(data.get(k)) for k in META_KEYS))
        if run is None or id(run) in out:
            raise InputError(f"restored steps of {'/'.join(str(data.get(k)) for k in META_KEYS)}: "
                             + ("given twice" if run is not None else "no --summaries run is that one"), path)
        if not data.get("steps"):
            raise InputError("the run was restored from a record published without its tuning steps: its updates "
                             "and costs are not known here (publish its run directory again, or tune it here)", path)
        if len(data["steps"]) != int(run["iterations"]) or any(s.get("benchmark") is None for s in data["steps"]):
            measured = sum(s.get("benchmark") is not None for s in data["steps"])
            raise InputError(f"a restored run of {run['iterations']} tuning steps needs each step's info and "
                             f"benchmark; the record has {len(data['steps'])} steps, {measured} with a benchmark", path)
        out[id(run)] = [Step(run["method"], run["fs"], str(run["sample"]), s["iteration"],
                             *step_updates(s["info"], path),
                             unsampled_cpu(s["benchmark"]["s"], s["benchmark"]["cpu_time"]), s["benchmark"]["s"],
                             s["benchmark"].get("machine"))
                        for s in data["steps"]]
    return out


def cmd_publish_simianer(args: argparse.Namespace) -> int:
    from smtlib.report.publish_simianer import publish_simianer

    method = None if args.batch_method == "none" else args.batch_method
    done = publish_simianer(args.workdir, args.pair, args.out, command=args.run_command or "", batch_method=method)
    print(f"smtlib report publish-simianer: {done['finished']} finished sharded runs ({len(done['restored'])} "
          f"restored from records), {done['baseline']} batch runs, "
          f"{done['unfinished']} started and unfinished, table files: {', '.join(done['tables']) or 'none yet'}, "
          f"weights left out: {len(done['heavy'])} (commit {done['commit'][:12]})", file=sys.stderr)
    return 0


def cmd_publish_stability(args: argparse.Namespace) -> int:
    from smtlib.report.publish_stability import publish_stability

    done = publish_stability(args.workdir, args.pair, args.out, command=args.run_command or "")
    print(f"smtlib report publish-stability: {len(done['finished'])} finished replicas, "
          f"{len(done['unfinished'])} started and unfinished, report files: {', '.join(done['reports']) or 'none yet'} "
          f"(commit {done['commit'][:12]})", file=sys.stderr)
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    from smtlib.report.publish import publish

    done = publish(args.workdir, args.pair, args.out, args.tables, command=args.run_command or "",
                   tables_workdir=args.tables_workdir, tables_command=args.tables_command or "",
                   feature_sets=args.feature_sets, figures=args.figures, side_settings=args.side_settings,
                   restored_from=args.restored_from)
    print(f"smtlib report publish: {done['finished']} finished runs ({done['finished_default']} at the default "
          f"settings, the tables'), {done['unfinished']} started and unfinished, "
          f"{done['earlier']} records from an earlier publish kept, "
          f"tables: {', '.join(done['tables']) or 'none yet'}, figures: {', '.join(done['figures']) or 'none'} "
          f"(commit {done['commit'][:12]})", file=sys.stderr)
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    p = sub.add_parser("best", help="keep the weights with the best dev score (BLEU, or --metric); write the "
                                    "learning curve")
    p.add_argument("--dev-bleu", nargs="+", required=True, help="smtlib bleu JSON of decoding with weights 0..N")
    p.add_argument("--metric", default="bleu", metavar="METRIC",
                   help="the run's tuning metric (smtlib tune --metric: a name or a mixture); the weights with its best "
                        "dev score are kept, the lowest for TER (default: bleu)")
    p.add_argument("--dev-score", nargs="*", metavar="SCORE",
                   help="with --metric: smtlib score JSON of the same decodes in each metric of it besides BLEU, each "
                        "metric's in the order 0..N (the metric is told by the file)")
    p.add_argument("--weights", nargs="+", required=True, help="weights 0..N (0 = initial)")
    p.add_argument("--out-weights", required=True)
    p.add_argument("--out-curve", required=True, help="learning curve TSV")
    p.add_argument("--meta", nargs="*", help="pair=.. fs=.. method=.. setting=.. sample=.. (written in the curve)")
    p.set_defaults(_action=cmd_best)

    p = sub.add_parser("summary", help="one run's tune and test scores as JSON")
    p.add_argument("--curve", required=True, help="learning curve of the run (smtlib report best)")
    p.add_argument("--test", nargs="+", required=True,
                   help="NAME=FILE: smtlib bleu JSON of each test set; smtlib score JSON of other metrics of the "
                        "same test set may follow (NAME=FILE again; the metric is told by the file)")
    p.add_argument("--out", required=True)
    p.add_argument("--expect", metavar="RECORD",
                   help="a restored run: its published record (smtlib report restore), which the summary must "
                        "reproduce (the same test BLEU on every test set, exactly), else exit 2 and no summary")
    p.set_defaults(_action=cmd_summary)

    p = sub.add_parser("restore", help="a finished run's kept weights and learning curve from its published record "
                                       "(smtlib report publish), instead of tuning it again")
    p.add_argument("--record", required=True, help="the run's record: runs/<fs>/<method>/<setting>/s<N>.json")
    p.add_argument("--meta", nargs="*", help="pair=.. fs=.. method=.. setting=.. sample=..: the run the record must be of")
    p.add_argument("--out-weights", required=True)
    p.add_argument("--out-curve", required=True, help="learning curve TSV, as smtlib report best writes it")
    p.add_argument("--out-steps", help="JSON: the run's tuning steps as the record keeps them (--info and measured "
                                       "cost of each; none for a record published without them), with its identity")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="the run's hyper-parameters, as smtlib tune takes them (repeatable): each tuning step the "
                        "record keeps must have run with these over the tuner's defaults, else it is refused")
    p.set_defaults(_action=cmd_restore)

    p = sub.add_parser("table", help="a table in the paper's layout and its companion")
    p.add_argument("--summaries", nargs="+", required=True)
    p.add_argument("--methods", nargs="+", required=True, help="rows, in order")
    p.add_argument("--feature-sets", nargs="+", required=True, help="column groups, in order")
    p.add_argument("--not-applicable", nargs="*", help="METHOD:FEATURE_SET cells shown as n/a")
    p.add_argument("--out", required=True, help="TSV")
    p.add_argument("--companion", required=True, help="Markdown: the table, BLEU signature, settings, runs")
    p.add_argument("--settings", help="JSON object of the settings to record in the companion")
    p.add_argument("--title")
    p.add_argument("--initial", nargs="+", metavar="FEATURE_SET:TEST_SET=BLEU_JSON",
                   help="smtlib bleu JSON of each test set decoded with the initial weights: the companion puts "
                        "each cell's Test beside that starting point")
    g = p.add_argument_group("significance (each cell against its column's best; smtlib.report.significance)")
    g.add_argument("--test-refs", nargs="+", metavar="NAME=REF",
                   help="each test set's reference file, in the order the outputs are concatenated (a name given "
                        "again adds a reference set)")
    g.add_argument("--outputs", nargs="+", metavar="HYP",
                   help="1-best test outputs: for each summary in order, one per test set in --test-refs order")
    g.add_argument("--tests", metavar="JSON", help="write every test (cells and pairs) here")
    g.add_argument("--pairs", choices=("all", "best"), default="all",
                   help="test every pair of methods of a column (default), or each cell against the best only")
    g.add_argument("--against", metavar="METHOD",
                   help="also test every cell against this method's cell of its column (one of --methods): a "
                        "'<set> vs METHOD' column of marks, Holm-corrected over the table's cells as a family of its own")
    g.add_argument("--ar-shuffles", type=integer_at_least(1), default=10_000, help="approximate randomization shuffles (default 10000)")
    g.add_argument("--boot-samples", type=integer_at_least(1), default=1000, help="bootstrap resamples for s_sel (default 1000)")
    g.add_argument("--seed", type=integer_at_least(0), default=0, help="seed of the shuffles and resamples (default 0)")
    add_bleu_options(p)
    p.set_defaults(_action=cmd_table)

    p = sub.add_parser("metric-matrix", help="tuning metric x evaluation metric: each cell's test scores")
    p.add_argument("--run", nargs="+", required=True, metavar="TUNING_METRIC=SUMMARY",
                   help="each run's summary (smtlib report summary) with the metric it was tuned toward")
    p.add_argument("--out", required=True, help="TSV: rows pair x feature set x method x tuning metric, columns "
                                                "BLEU and every other evaluation metric of the summaries")
    p.set_defaults(_action=cmd_metric_matrix)

    p = sub.add_parser("curves", help="learning curves (dev BLEU, or the runs' tuning metric, by iteration) of many runs")
    p.add_argument("--curves", nargs="+", required=True)
    p.add_argument("--out", required=True, help="figure (PNG/SVG/PDF)")
    p.add_argument("--tsv", required=True, help="all curves in one TSV")
    p.add_argument("--title")
    p.set_defaults(_action=cmd_curves)

    p = sub.add_parser("figure1", help="regularization sweep: tune and test BLEU by setting (Figure 1)")
    p.add_argument("--summaries", nargs="+", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--tsv", required=True)
    p.add_argument("--title")
    p.set_defaults(_action=cmd_figure1)

    p = sub.add_parser("replay", help="methods on Moses's recorded n-best lists vs Moses's recorded BLEU")
    p.add_argument("--truth", required=True, help="Moses's truth/results.dat (plain or .gz)")
    p.add_argument("--score", nargs="+", required=True, help="METHOD:ITERATION:FILE (smtlib bleu JSON)")
    p.add_argument("--out", required=True, help="TSV")
    p.add_argument("--figure", help="BLEU by iteration (PNG)")
    p.set_defaults(_action=cmd_replay)

    p = sub.add_parser("paper", help="a table next to the paper's: its orderings of methods, its claims (§5)")
    p.add_argument("--table", required=True, help="TSV of `smtlib report table`")
    p.add_argument("--paper", required=True, choices=("table4", "table5", "table6"), help="the paper's table")
    p.add_argument("--out", required=True,
                   help="TSV: each pair of methods the paper orders in a column, our order and our test")
    p.add_argument("--tests", help="the table's tests (JSON of `smtlib report table --tests`)")
    p.add_argument("--findings", help="Markdown: the paper's §5 findings decided by run-level tests (needs --tests)")
    p.set_defaults(_action=cmd_paper)

    p = sub.add_parser("page", help="one HTML page of a table's files (TSV as tables, Markdown as text) for the report")
    p.add_argument("--title", required=True, help="the page's title")
    p.add_argument("--files", nargs="+", required=True, help="the files, in the page's order")
    p.add_argument("--out", required=True, help="HTML")
    p.set_defaults(_action=cmd_page)

    p = sub.add_parser("publish", help="a workflow run's finished runs, tables, costs and commit, for the repository")
    p.add_argument("--workdir", required=True, help="the directory snakemake ran in (a git checkout)")
    p.add_argument("--pair", required=True, help="language pair of the runs, e.g. fr-en")
    p.add_argument("--tables", nargs="*", default=[], help="table names whose files to copy, e.g. table4")
    p.add_argument("--out", required=True, help="output directory, e.g. docs/results/table4")
    # dest: not args.command, the subcommand's name (error messages begin with it)
    p.add_argument("--command", dest="run_command", help="the snakemake command that produced the run (recorded)")
    p.add_argument("--tables-workdir", help="a checkout at a later commit holding the same runs, where the "
                   "tables were computed: tables, figures and their costs from there (default: --workdir)")
    p.add_argument("--tables-command", help="the snakemake command of the table step (recorded)")
    p.add_argument("--feature-sets", nargs="+", metavar="FS",
                   help="only the runs and costs of these feature sets, e.g. small medium big for a table whose "
                        "run directory also runs Figure 1's sweep (feature set overfit); default: all")
    p.add_argument("--figures", nargs="+", default=[], metavar="NAME",
                   help="the figures to copy (results/figures/NAME.*), e.g. figure1; default: the pair's "
                        "(its learning curves, results/figures/*PAIR*)")
    p.add_argument("--side-settings", nargs="+", default=[], metavar="SETTING",
                   help="settings of a side experiment that no table reads, in --tables-workdir (e.g. shards=2) "
                        "or in --workdir (e.g. the seed-only replicas seed=1 .. seed=5): its runs are neither "
                        "checked against the published runs, nor published, nor counted in costs.tsv")
    p.add_argument("--restored-from", nargs="+", default=[], metavar="RUNS_DIR",
                   help="published runs/ directories besides OUT/runs, searched after it, holding the records of "
                        "runs that --tables-workdir restored and --workdir lacks (its config restore_runs named a "
                        "list, e.g. docs/results/table6/runs): each such run must reproduce its record; named in "
                        "PROVENANCE.md, not copied")
    p.set_defaults(_action=cmd_publish)

    p = sub.add_parser("publish-simianer", help="a run of Simianer et al.'s Table 2: finished runs, table, findings, "
                                                 "costs and commit, for the repository")
    p.add_argument("--workdir", required=True, help="the directory snakemake ran in (a git checkout)")
    p.add_argument("--pair", default="de-en", help="the pair of config simianer.pair (default de-en)")
    p.add_argument("--out", required=True, help="output directory, e.g. docs/results/simianer_table2")
    p.add_argument("--command", dest="run_command", help="the snakemake command that produced the run (recorded)")
    p.add_argument("--batch-method", default="kbmira",
                   help="config simianer.batch_baseline: the batch tuner whose medium runs are published "
                        "(default kbmira; 'none' for no such row)")
    p.set_defaults(_action=cmd_publish_simianer)

    p = sub.add_parser("publish-stability", help="Hopkins & May's seed-only replicas of one pair: records, test "
                                                  "curves, findings, costs and commit, for the repository")
    p.add_argument("--workdir", required=True, help="the directory snakemake ran in (a git checkout)")
    p.add_argument("--pair", required=True, help="a pair of config stability.pairs")
    p.add_argument("--out", required=True, help="output directory, e.g. docs/results/stability/fr-en")
    p.add_argument("--command", dest="run_command", help="the snakemake command that produced the run (recorded)")
    p.set_defaults(_action=cmd_publish_stability)

    p = sub.add_parser("pro-mert", help="Hopkins & May (2011) Figure 3: synthetic PRO vs MERT vs kb-mira")
    p.add_argument("--dims", type=integer_at_least(1), nargs="+", help="feature dimensions (default: H&M's, 10 .. 1000)")
    p.add_argument("--reps", type=integer_at_least(1), default=3, help="repetitions per dimension (default 3, as H&M)")
    p.add_argument("--methods", nargs="+", help="among pro, kbmira, mert (default: all three)")
    p.add_argument("--out", required=True, help="TSV: method, dim, features, rep, cosine, cpu_seconds, mert_restarts")
    p.add_argument("--figure", required=True, help="mean cosine by dimension (PNG)")
    p.set_defaults(_action=cmd_pro_mert)


    p = sub.add_parser("test-curve", help="a run's learning curve with the test BLEU of every iteration's weights")
    p.add_argument("--curve", required=True, help="learning curve of the run (smtlib report best)")
    p.add_argument("--test", nargs="+", required=True, metavar="NAME=BLEU_JSON",
                   help="smtlib bleu JSON of test set NAME decoded with the weights 0..N: each name N+1 times, "
                        "in iteration order")
    p.add_argument("--out", required=True, help="TSV: the curve's columns, test_bleu (the mean over the test "
                                                "sets) and test_<NAME> per test set")
    p.set_defaults(_action=cmd_test_curve)

    p = sub.add_parser("stability", help="seed-only replicas against PRO: SD of the final test BLEU and "
                                         "steadiness of the test curves (Hopkins & May 2011, Figures 5-6)")
    p.add_argument("--curves", nargs="+", required=True, help="test curves (smtlib report test-curve), one per "
                                                              "replica, of one pair")
    p.add_argument("--methods", nargs="+", required=True, help="the methods, in the order of the tables and "
                                                               "figure; each needs replicas in every feature set")
    p.add_argument("--drop", type=positive_float, default=0.3,
                   help="a fall of test BLEU between two iterations by more than this is a drop (default 0.3)")
    p.add_argument("--permutations", type=integer_at_least(1), default=10_000,
                   help="the permutation test enumerates every split up to this many, else draws this many "
                        "(default 10000)")
    p.add_argument("--seed", type=integer_at_least(0), default=1, help="seed of the drawn splits (default 1)")
    p.add_argument("--out", required=True, help="Markdown: the claims, each method, each replica")
    p.add_argument("--tsv", required=True, help="TSV: one row per replica")
    p.add_argument("--figure", required=True, help="dev and test BLEU by iteration (PNG)")
    p.set_defaults(_action=cmd_stability)


    p = sub.add_parser("cmira", help="Tan et al. (2013): c-MIRA against kb-mira and kb-mert on a table's runs, "
                                     "and their updates and CPU seconds per tuning step (Tables 1, 2 and 4)")
    p.add_argument("--summaries", nargs="+", required=True, help="run summaries of cmira, kbmira and mert")
    p.add_argument("--test-refs", nargs="+", required=True, metavar="NAME=REF",
                   help="each test set's reference file, in the order the outputs are concatenated")
    p.add_argument("--outputs", nargs="+", required=True, metavar="HYP",
                   help="1-best test outputs: for each summary in order, one per test set in --test-refs order")
    p.add_argument("--tune-info", nargs="*", default=[], metavar="JSON",
                   help="smtlib tune --info of every tuning step: for each summary in order (but those of "
                        "--restored-steps), its iterations 1..N")
    p.add_argument("--benchmarks", nargs="*", default=[], metavar="TSV",
                   help="the Snakemake benchmark file of every tuning step, in the order of --tune-info")
    p.add_argument("--restored-steps", nargs="*", default=[], metavar="JSON",
                   help="the steps of runs restored from their records (smtlib report restore --out-steps), "
                        "each matched to its summary by the run's identity, in any order")
    p.add_argument("--out", required=True, help="Markdown: the claims decided, the updates and times")
    p.add_argument("--tsv", required=True, help="TSV: updates and CPU seconds per step, per feature set and method")
    p.add_argument("--title")
    p.add_argument("--ar-shuffles", type=integer_at_least(1), default=10_000,
                   help="approximate randomization shuffles (default 10000)")
    p.add_argument("--boot-samples", type=integer_at_least(2), default=1000,
                   help="bootstrap resamples of the AR test's s_sel (default 1000)")
    p.add_argument("--seed", type=integer_at_least(0), default=0, help="seed of the shuffles and resamples (default 0)")
    add_bleu_options(p)
    p.set_defaults(_action=cmd_cmira)


def cmd_page(args: argparse.Namespace) -> int:
    from smtlib.report.page import table_page

    text = table_page(args.title, args.files)
    with atomic_output(args.out) as fh:
        fh.write(text)
    return 0


def run(args: argparse.Namespace) -> int:
    return args._action(args)
