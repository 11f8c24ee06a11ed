"""``smtlib loop``: a standalone tuning loop around any decoder, in the style of Moses's
``mert-moses.pl`` but with every tuner of :mod:`smtlib.tuners.registry`.

Each iteration decodes the dev set with the current weights (the decoder is an external command,
:mod:`~smtlib.loop.decoder_command`), checks its n-best list (:mod:`~smtlib.loop.decoder_output`),
adds it to a binary pool (:func:`smtlib.kbest.store.add_kbest`), runs one optimizer step on the
pool (:mod:`~smtlib.loop.step`, with the features held fixed and the ranges of
:mod:`~smtlib.loop.constraints`; MERT with ranges is :mod:`~smtlib.loop.bounded_mert`) and decides
whether to stop. The working directory (:mod:`~smtlib.loop.workdir`) holds one folder per
iteration, so that a rerun of the same command continues after the last complete iteration
(:mod:`~smtlib.loop.loop`). The options and their checks are :mod:`~smtlib.loop.options`.

Nothing here imports :mod:`smtlib.cli`: the command (:mod:`smtlib.cli.loop`) builds a
:class:`~smtlib.loop.options.LoopOptions` and calls :func:`~smtlib.loop.loop.run_loop`.
"""
