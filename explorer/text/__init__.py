"""Text units with offsets: chunks and spans, sentences and paragraphs, the Markdown block
structure (one markdown-it parse that the loader's blocks and the sentence splitter's code
fences share), the length functions that measure them (characters, words, model and OpenAI
tokens, counted in bulk), and counts said in words for every message (``wording.plural``).

Everything here is pure and works on plain strings and offsets. It may import
``explorer.errors``, ``explorer.limits`` and ``explorer.models`` (a tokenizer is found through
the model registry); it never imports documents, embeddings, strategies or anything above.
"""
