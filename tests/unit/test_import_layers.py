"""The package layering (issue 26): what each layer may import, and no import cycle between modules.

Read from the source (every ``import`` / ``from ... import`` of an ``smtlib`` module, at module level
or inside a function), so a lazy import does not hide an arrow back up.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest
from tests.support.repo import REPO

ROOT = REPO / "smtlib"


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """module -> the smtlib modules it imports (a package import counts as its ``__init__``)."""
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("smtlib"):
                for alias in node.names:  # `from smtlib.tuners import line_search` imports a module
                    sub = f"{node.module}.{alias.name}"
                    targets.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.startswith("smtlib"))
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


GRAPH = _imports()


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_module_imports_itself_back():
    """No cycle of imports between modules (decoder.loader <-> decoder.model had one, through a
    ``__getattr__`` shim; lattice.format <-> its writer had one)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, cycles


@pytest.mark.parametrize("layer, forbidden, allowed", [
    # the lattice layer is below the decoder (which writes lattices through it) and the tuners
    ("smtlib.lattice", ("smtlib.decoder", "smtlib.tuners", "smtlib.cli"), ()),
    ("smtlib.kbest", ("smtlib.decoder", "smtlib.tuners", "smtlib.lattice", "smtlib.cli"), ()),
    # the system builder takes the decoder's compile_model as a parameter instead of importing it
    ("smtlib.system", ("smtlib.decoder", "smtlib.tuners", "smtlib.cli"), ()),
    # only the tuners that decode (online MIRA, and the pairwise SGD's decoding pass) use the decoder
    ("smtlib.tuners", ("smtlib.decoder", "smtlib.cli"), ("smtlib.tuners.mira", "smtlib.tuners.sgd_decode")),
])
def test_layers_import_only_downward(layer, forbidden, allowed):
    bad = sorted((m, t) for m, targets in GRAPH.items() if _in(m, layer) and m not in allowed
                 for t in targets if any(_in(t, f) for f in forbidden))
    assert not bad, bad


def test_the_decoder_only_produces_lattices():
    """The decoder builds and writes lattices (format, paths); reading them into a set, envelopes and
    path statistics are the tuners' side of the lattice layer."""
    reading = ("smtlib.lattice.reader", "smtlib.lattice.lattice_set", "smtlib.lattice.envelope",
               "smtlib.lattice.stats", "smtlib.lattice.problem")
    bad = sorted((m, t) for m, targets in GRAPH.items() if _in(m, "smtlib.decoder") for t in targets if t in reading)
    assert not bad, bad
    assert not [p for p in (ROOT / "decoder").glob("lattice*.py")]


def test_the_workflow_plan_reads_only_names_and_defaults():
    """smtlib.workflow is imported by the Snakefile, which every cluster job parses again: it reads the
    registries and defaults it renders (corpora, feature sets, tuner registry, decoder settings, the
    decoder command's template parser: standard library only) and the standard-library-only leaves it
    writes its own records with (smtlib.io, smtlib.errors), never a layer that computes; and nothing in
    smtlib imports it (the rules and benchmarks do)."""
    read = ("smtlib.workflow", "smtlib.decoder.settings", "smtlib.tuners.registry", "smtlib.data.corpora",
            "smtlib.system.feature_sets", "smtlib.loop.decoder_command", "smtlib.io", "smtlib.errors")
    bad = sorted((m, t) for m, targets in GRAPH.items() if _in(m, "smtlib.workflow")
                 for t in targets if not any(_in(t, r) for r in read))
    assert not bad, bad
    users = sorted(m for m, targets in GRAPH.items() if not _in(m, "smtlib.workflow")
                   and any(_in(t, "smtlib.workflow") for t in targets))
    assert not users, users


def test_the_decoders_settings_load_without_the_decoder():
    """The CLI's search options and the workflow read smtlib.decoder.settings; the package's exports
    are lazy, so that import does not load numba and the compiled decoder."""
    code = ("import sys, smtlib.decoder.settings, smtlib.workflow.options, smtlib.cli.common; "
            "print(sorted(m for m in sys.modules if m.startswith('smtlib.decoder')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['smtlib.decoder', 'smtlib.decoder.settings']"


def test_reading_a_binary_pool_does_not_import_pandas():
    """A tuning step reads a binary pool (smtlib.kbest.store); pandas (about 0.25 s to import) is for
    reading and merging text k-best lists only."""
    code = "import sys, smtlib.kbest.store, smtlib.cli.tune_kbest; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
