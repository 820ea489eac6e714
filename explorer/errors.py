"""Errors the user can act on. Every message names the bad value and says what to do."""

from __future__ import annotations


class ExplorerError(ValueError):
    """Base class: anything raised on purpose for bad input. The UI and CLI show ``str(err)``."""


class LoadError(ExplorerError):
    """A document could not be read (encrypted, scanned, empty, corrupt, too large...)."""


class ParamError(ExplorerError):
    """A strategy parameter (or a combination of them) is invalid."""


class ModelError(ExplorerError):
    """An embedding model could not be found or loaded."""


class LimitError(ExplorerError):
    """A request would exceed one of the documented work limits (chunk count, pages, time)."""


class Cancelled(ExplorerError):
    """The user stopped a long run (see :mod:`explorer.jobs`); what was done before is kept."""
