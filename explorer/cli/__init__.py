"""The command line (``python -m explorer``): the same core as the app, for batch use and
for checking. Every user error becomes one ``error:`` line and exit status 2.

It is the top of the core and may import any of it; nothing in ``explorer`` imports it.
"""
