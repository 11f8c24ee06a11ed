"""smtlib: a reference toolkit for tuning statistical machine translation.

Sub-packages
------------
kbest   Moses n-best lists: reading, writing, merging, the in-memory pool.
bleu    BLEU sufficient statistics, corpus BLEU and the sentence-level variants.
tuners  One module per optimizer; ``smtlib tune METHOD`` runs one of them.
"""

__version__ = "0.1.0"
