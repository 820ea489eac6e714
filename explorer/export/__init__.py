"""Exports: chunks as JSONL / CSV / JSON and a configuration as JSON (:mod:`.data`), and the same
configuration as code that runs (:mod:`.code`: our CLI and API, and each strategy's own peer
equivalents in LangChain, LlamaIndex and Chonkie).

It may import the core below it; code for a strategy comes from the strategy's own declaration
(``Strategy.peer_code``), so adding a strategy never means editing this package.
"""
