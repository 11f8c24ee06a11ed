#!/usr/bin/env bash
# Install smtlib from the checkout the workflow runs in (Snakemake runs this from the repository root
# inside the new environment). Editable, so that the rules run the checkout's code.
set -euo pipefail
python -m pip install --no-deps --no-build-isolation -e .
