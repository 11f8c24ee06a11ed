"""smtlib: a reference toolkit for tuning statistical machine translation.

Sub-packages
------------
kbest   Moses n-best lists: reading, writing, merging, the in-memory pool.
bleu    BLEU sufficient statistics, corpus BLEU and the sentence-level variants.
tuners  One module per optimizer; ``smtlib tune METHOD`` runs one of them.
"""

from smtlib._reproducible import pin_numeric_libraries

# Before anything loads NumPy: its and BLAS's CPU-specific code paths pinned, so that results are the
# same bits on every x86-64 CPU (smtlib._reproducible).
pin_numeric_libraries()

__version__ = "0.1.0"
