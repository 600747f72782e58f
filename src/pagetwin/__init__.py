"""pagetwin: find duplicate and near-duplicate web pages in crawls.

The public API (the application core, ``pagetwin.app``; each call validates its settings)::

    from pagetwin import Settings, dedup, iter_texts, iter_keywords, learn_templates
    summary = dedup(["crawl.warc.gz"], "out/", Settings())
    for row in iter_keywords(["crawl.warc.gz"], Settings(), top=10, weighting="tfidf"): ...

and one index asked about pages in memory, and added to (``pagetwin.api``)::

    from pagetwin import Index
    with Index.open("out/index.sqlite") as index:   # or Index.memory()
        index.add([{"url": url, "html": html}])
        for match in index.query({"url": other_url, "html": other_html}): ...
"""

__version__ = "0.1.0"

__all__ = [
    "Settings", "dedup", "iter_texts", "iter_keywords", "learn_templates", "Index", "PageError", "__version__",
]  # fmt: skip

_APP = ("dedup", "iter_texts", "iter_keywords", "learn_templates")
_API = ("Index", "PageError", "Match", "QueryResult", "Added", "Cluster", "Member")


def __getattr__(name: str):
    # Lazy, so `import pagetwin` stays cheap in worker processes and for the CLI's --help.
    if name == "Settings":
        from pagetwin.config import Settings

        return Settings
    if name in _APP:
        from pagetwin import app

        return getattr(app, name)
    if name in _API:
        from pagetwin import api

        return getattr(api, name)
    raise AttributeError(f"module 'pagetwin' has no attribute {name!r}")
