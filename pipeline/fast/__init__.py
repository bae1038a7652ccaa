"""pubproof.pipeline.fast: the compiled twins of the link judges, for the per-packet path.

:mod:`.link`, :mod:`.link50`, :mod:`.ends` and :mod:`.aliases` judge as
:mod:`pubproof.judge.link`, :mod:`~pubproof.judge.link50`, :mod:`~pubproof.judge.ends` and
:mod:`~pubproof.judge.aliases` do, finding for finding (``tests/test_judge_twins.py``), with
the tables compiled to typed entries and the per-packet helpers inlined; :mod:`.layout`
holds the layout tricks the pipeline's per-packet path shares and says why each exists.
Only the capture pipeline uses them; everything else uses the readable judges.
"""
