"""Documents: the normalised text with its pages and blocks (all character offsets), the
loaders that build it from PDF, Markdown and text, the optional visible clean-up, and the
bundled samples.

It may import ``explorer.errors``, ``explorer.limits``, ``explorer.untrusted`` and
``explorer.text``; nothing here embeds, chunks or retrieves.
"""
