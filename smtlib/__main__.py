"""``python -m smtlib`` is the same as the ``smtlib`` command."""

from smtlib.cli import main

raise SystemExit(main())
