"""``benchmarks/refcounts.py``: reference-count updates counted per call site and named by source line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from tests.support.repo import REPO

_PROBE = textwrap.dedent('''
    import importlib.util, json, sys
    spec = importlib.util.spec_from_file_location("refcounts", sys.argv[1])
    rc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rc)
    counts, addresses = rc.install_counting_incref()
    import numpy as np
    from tests.support.refcount_probe import probe_loop

    probe_loop(np.arange(8), np.zeros(1), np.ones(8), 1000)
    functions = rc.compiled_functions()
    sites = [(int(counts[i]), int(addresses[i])) for i in counts.nonzero()[0]]
    starts = [f[0] for f in functions]
    import bisect
    names = [rc.short_name(functions[bisect.bisect_right(starts, a) - 1][1]) for _, a in sites]
    print(json.dumps({"counts": [n for n, _ in sites], "names": names}))
''')


def test_the_updates_of_a_loop_are_counted_per_call_site_in_the_function_that_makes_them(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(_PROBE, encoding="utf-8")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, str(script), str(REPO / "benchmarks" / "refcounts.py")], env=env,
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    hot = [n for n, name in zip(found["counts"], found["names"]) if name.endswith(".probe_loop")]
    assert hot and max(hot) >= 1000  # one update per iteration at least, counted in the loop's own code


def test_short_name_reads_numbas_mangled_symbols():
    spec_path = REPO / "benchmarks" / "refcounts.py"
    import importlib.util

    spec = importlib.util.spec_from_file_location("refcounts_names", spec_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.short_name("_ZN6smtlib7decoder4cube11_fill_stackB4v159B40c8tJTIeFIjxB2") == \
        "smtlib.decoder.cube._fill_stack"
    assert module.short_name("NRT_incref") == "NRT_incref"
