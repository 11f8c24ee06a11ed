"""The workflow's tables next to the papers' published ones."""
