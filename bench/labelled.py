"""Labelled near-duplicate data for calibration: human judgements and two-version documentation.

- `copycat_pairs()`: 480 human-judged page pairs from ../shared/data/neardup (already extracted,
  lowercased text). Label 3 = near duplicate; 0.5 and 1 = not; 2 = in between (kept, but neither
  positive nor negative); 'unknown'/'unkown' are dropped.
- `llvm_pairs()`: the LLVM documentation in two Debian versions (llvm-15-doc, llvm-16-doc).
  The same page path in both versions is a positive (graded near duplicate); different paths are
  negatives, half of them "hard" (another page of the same section).

Everything raises `DataMissing` (with a message) when its data cannot be found or fetched, so
tests can `pytest.skip(str(exc))`.
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

from bench.debian import REPO_ROOT, DataMissing, ensure_debian_docs, html_files

__all__ = [
    "DataMissing",
    "SHARED_DATA",
    "copycat_pairs",
    "ensure_debian_docs",
    "is_hard_negative",
    "llvm_doc_pages",
    "llvm_pairs",
    "shared_data_dir",
]

SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
COPYCAT_FILE = Path("neardup") / "copycat_judgments.jsonl"
_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)")


def shared_data_dir() -> Path:
    """../shared/data next to the repo (override with PAGETWIN_SHARED_DATA); DataMissing if absent."""
    path = Path(os.environ.get("PAGETWIN_SHARED_DATA", SHARED_DATA))
    if not path.is_dir():
        raise DataMissing(f"shared data folder {path} not found (real-data benchmarks need it)")
    return path


def _parse_label(raw) -> float | None:
    """'3' -> 3.0; 'unknown'/'unkown' -> None. One row says '0.5s': a typo for 0.5, read as 0.5."""
    if isinstance(raw, (int, float)):
        return float(raw)
    match = _NUMBER.match(str(raw))
    return float(match.group(1)) if match else None


def copycat_pairs(path: str | Path | None = None) -> list[dict]:
    """Human-judged pairs, unknown labels excluded, in file order.

    Each dict: pair, label (float), first_text, second_text, s3 (share of common word 8-grams),
    positive (label == 3), negative (label in (0.5, 1)), canonical_link, first_url, second_url.
    """
    file = Path(path) if path is not None else shared_data_dir() / COPYCAT_FILE
    if not file.is_file():
        raise DataMissing(f"copycat judgements not found at {file}")
    pairs = []
    with open(file, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            label = _parse_label(row.get("label"))
            if label is None:
                continue
            pairs.append(
                {
                    "pair": row["pair"],
                    "label": label,
                    "first_text": row.get("src_doc") or "",
                    "second_text": row.get("target_doc") or "",
                    "s3": float(row["s3"]) if row.get("s3") is not None else None,
                    "positive": label == 3.0,
                    "negative": label in (0.5, 1.0),
                    "canonical_link": row.get("canonical_link"),
                    "first_url": row.get("first"),
                    "second_url": row.get("second"),
                }
            )
    return pairs


def llvm_doc_pages(version: int | str) -> dict[str, Path]:
    """{relative HTML path: file} of Debian's llvm-<version>-doc (fetched on first use)."""
    pkg = f"llvm-{version}-doc"
    root = ensure_debian_docs([pkg])[pkg]
    pages = html_files(root)
    if not pages:
        raise DataMissing(f"{pkg} unpacked but holds no HTML pages under {root}")
    return pages


def _section(rel_path: str) -> str:
    """The folder a page lives in ('' for top-level pages): pages of one section share a template."""
    return rel_path.rsplit("/", 1)[0] if "/" in rel_path else ""


def is_hard_negative(rel_a: str, rel_b: str) -> bool:
    """Different pages of the same section (same folder)."""
    return rel_a != rel_b and _section(rel_a) == _section(rel_b)


def llvm_pairs(
    max_pairs: int | None = None, seed: int = 0, versions: tuple[int, int] = (15, 16)
) -> tuple[list[tuple[Path, Path]], list[tuple[Path, Path]]]:
    """(positives, negatives): pairs of HTML files (version A file, version B file).

    positives: every path present in both versions (a deterministic sample of `max_pairs` of
    them if given), sorted by path. negatives: as many pairs of different paths, sampled with
    `seed`: the first half "hard" (another page of the same section, when the section has one),
    the rest uniformly random different paths. Use `is_hard_negative` on relative paths, or
    compare parents, to tell them apart.

    Caveat (measured with resiliparse main text and word 5-shingles): a few different paths
    really have the same content (the moved Kaleidoscope tutorial stubs, some AMDGPU operand
    stubs): about 12 of the 900 default negatives have Jaccard >= 0.5, several 1.0. Same-path
    positives have median Jaccard 1.0 on main text (often only the footer date changed).
    """
    pages_a = llvm_doc_pages(versions[0])
    pages_b = llvm_doc_pages(versions[1])
    shared = sorted(set(pages_a) & set(pages_b))
    if len(shared) < 2:
        raise DataMissing(f"llvm {versions} docs share fewer than 2 page paths")
    rng = random.Random(seed)
    if max_pairs is not None and max_pairs < len(shared):
        shared = sorted(rng.sample(shared, max_pairs))
    positives = [(pages_a[p], pages_b[p]) for p in shared]

    all_b = sorted(pages_b)
    by_section: dict[str, list[str]] = {}
    for rel in all_b:
        by_section.setdefault(_section(rel), []).append(rel)

    wanted = len(positives)
    seen: set[tuple[str, str]] = set()
    negatives: list[tuple[Path, Path]] = []

    def add(rel_a: str, rel_b: str) -> None:
        if rel_a != rel_b and (rel_a, rel_b) not in seen:
            seen.add((rel_a, rel_b))
            negatives.append((pages_a[rel_a], pages_b[rel_b]))

    # Hard negatives: same section, different page.
    order = list(shared)
    rng.shuffle(order)
    for rel_a in order:
        if len(negatives) >= wanted // 2:
            break
        siblings = by_section.get(_section(rel_a), [])
        if len(siblings) > 1:
            rel_b = rng.choice(siblings)
            while rel_b == rel_a:
                rel_b = rng.choice(siblings)
            add(rel_a, rel_b)
    # Random negatives: any two different paths.
    all_a = sorted(pages_a)
    attempts = 0
    while len(negatives) < wanted and attempts < wanted * 50:
        attempts += 1
        add(rng.choice(all_a), rng.choice(all_b))
    return positives, negatives
