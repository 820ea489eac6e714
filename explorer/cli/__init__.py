"""The command line (``python -m explorer``): the same core as the app, for batch use and
for checking. Every user error becomes one ``error:`` line and exit status 2 (:mod:`.main`).
The arguments are :mod:`.parser`; the commands :mod:`.commands` (list, show, chunk, compare)
and :mod:`.scores` (evaluate, sweep); what they read :mod:`.inputs` and how they write
:mod:`.output`.

It is the top of the core and may import any of it; nothing in ``explorer`` imports it.
"""
