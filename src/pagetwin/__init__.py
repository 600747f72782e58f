"""pagetwin: find duplicate and near-duplicate web pages in crawls."""

__version__ = "0.1.0"

