"""pagetwin: find duplicate and near-duplicate web pages in crawls.

The public API::

    from pagetwin import Settings, dedup, iter_texts
    summary = dedup(["crawl.warc.gz"], "out/", Settings())
"""

__version__ = "0.1.0"

__all__ = ["Settings", "dedup", "iter_texts", "__version__"]


def __getattr__(name: str):
    # Lazy, so `import pagetwin` stays cheap in worker processes and for the CLI's --help.
    if name == "Settings":
        from pagetwin.config import Settings

        return Settings
    if name in ("dedup", "iter_texts"):
        from pagetwin import app

        return getattr(app, name)
    raise AttributeError(f"module 'pagetwin' has no attribute {name!r}")
