"""Building a phrase-based system: corpus preparation, alignment, phrase tables, reordering, LM."""
