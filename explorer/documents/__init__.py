"""Documents: the normalised text with its pages and blocks (all character offsets), the
loaders that build it from PDF, Markdown and text (:mod:`.loaders`, bytes decoded by
:mod:`.decoding`, PDF pages read by :mod:`.pdf`), the optional visible clean-up, the Markdown
structure, a PDF's headings read from its fonts (:mod:`.pdf_headings`), and the bundled samples.

It may import ``explorer.errors``, ``explorer.limits``, ``explorer.untrusted`` and
``explorer.text``; nothing here embeds, chunks or retrieves.
"""
