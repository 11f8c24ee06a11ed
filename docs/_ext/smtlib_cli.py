"""The command reference, generated from the ``smtlib`` argparse parsers at every build.

:func:`command_help` walks :func:`smtlib.cli.build_parser` for each command of
:func:`smtlib.cli.available_commands` (and each action of a command with sub-actions, and each
method of ``smtlib tune --list``) and returns the help texts ``smtlib ... --help`` prints. The Sphinx
directive ``smtlib-commands`` renders them as one section per command, so the reference cannot
drift from the code. The module imports Sphinx only in :func:`setup`: the tests read
:func:`command_help` without the documentation tools installed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os

WIDTH = "80"  # argparse wraps help to $COLUMNS: fixed, so the build does not depend on the terminal


def _subactions(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps sub-parsers only here
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _subaction_help(parser: argparse.ArgumentParser) -> dict[str, str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {choice.dest: choice.help or "" for choice in action._choices_actions}
    return {}


def _command_parser(name: str, argv: list[str]) -> argparse.ArgumentParser:
    from smtlib.cli import build_parser

    return _subactions(build_parser(name, argv))[name]


def tune_methods() -> list[tuple[str, str, str]]:
    """``smtlib tune --list`` as (method, summary, metrics) rows."""
    from smtlib.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["tune", "--list"])
    return [tuple((line.split("\t") + ["", ""])[:3]) for line in out.getvalue().splitlines() if line.strip()]


def command_help() -> list[dict]:
    """One entry per command: ``name``, ``summary`` (its line in ``smtlib --help``), ``help`` (its
    ``--help`` text) and ``children``, entries of the same shape for its actions (``smtlib kbest
    merge``) or, for ``tune``, its methods (``smtlib tune kbmira --help``)."""
    from smtlib.cli import available_commands

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        entries = []
        for name, (_module, summary) in available_commands().items():
            parser = _command_parser(name, [name])
            children = [{"name": f"{name} {action}", "summary": _subaction_help(parser).get(action, ""),
                         "help": sub.format_help(), "children": []}
                        for action, sub in _subactions(parser).items()]
            if name == "tune":
                children = [{"name": f"tune {method}", "summary": f"{text} ({metrics})",
                             "help": _command_parser(name, [name, method, "--help"]).format_help(), "children": []}
                            for method, text, metrics in tune_methods()]
            entries.append({"name": name, "summary": summary, "help": parser.format_help(), "children": children})
        return entries
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def setup(app):
    from docutils import nodes
    from sphinx.util.docutils import SphinxDirective

    def section(entry: dict, directive: SphinxDirective) -> nodes.section:
        title = f"smtlib {entry['name']}"
        node = nodes.section(ids=[nodes.make_id(title)], names=[nodes.fully_normalize_name(title)])
        node += nodes.title(title, "", nodes.literal(title, title))
        if entry["summary"]:
            node += nodes.paragraph(entry["summary"], entry["summary"])
        node += nodes.literal_block(entry["help"], entry["help"], language="text")
        for child in entry["children"]:
            node += section(child, directive)
        return node

    class SmtlibCommands(SphinxDirective):
        """``smtlib-commands``: every command's ``--help``, one section each."""

        has_content = False

        def run(self):
            return [section(entry, self) for entry in command_help()]

    app.add_directive("smtlib-commands", SmtlibCommands)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
