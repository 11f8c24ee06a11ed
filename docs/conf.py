"""Sphinx configuration of the smtlib manual: ``python -m sphinx -W --keep-going -b html docs docs/_build/html``."""

import pathlib
import sys

DOCS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))

from smtlib import __version__  # noqa: E402

project = "smtlib"
author = "the smtlib developers"
release = version = __version__
copyright = "the smtlib developers, MIT licence"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "smtlib_cli"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# docs/results/ holds the published results as files (linked from the results page, not pages)
exclude_patterns = ["_build", "results/**", "README.md", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "description"
napoleon_google_docstring = False
napoleon_numpy_docstring = True

html_theme = "furo"
html_title = f"smtlib {release}"
html_static_path = ["_static"]
