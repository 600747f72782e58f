"""What every reader shares: the accounting of records (SourceStats), the marker a reader yields
for a record it does not turn into a page (Skip), and the input error type."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pagetwin.model import Page

MAX_EXAMPLES = 3  # example details kept per skip reason (for the summary)


class InputError(Exception):
    """A missing or unreadable input path. The message is one line, fit to print as is;
    ``problems`` are its parts, one message per input (readable_inputs)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems) if problems is not None else [message]


@dataclass(slots=True)
class Skip:
    """A record a reader saw and did not turn into a page, with the reason."""

    reason: str
    detail: str = ""


@dataclass
class SourceStats:
    """Counts of what the readers saw. Invariant:
    ``records_total == pages_read + images + sum(skipped.values())``."""

    records_total: int = 0  # every record / file / line seen in the inputs
    pages_read: int = 0  # Pages yielded (responses + revisits)
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count
    cut: int = 0  # pages whose body was cut at max_page_bytes (still read)
    images: int = 0  # image records yielded (when images are wanted)
    revisits: int = 0  # of pages_read, revisit records
    sniffed: int = 0  # of pages_read, pages recognised as HTML by their body, not their label
    partial_decodes: int = 0  # of pages_read, pages whose content encoding stopped early
    errors: list[str] = field(default_factory=list)  # one-line messages about whole files
    examples: dict[str, list[str]] = field(default_factory=dict)  # reason -> a few details
    # Files in a folder given that are not inputs (logs, CDX files, ...): not records, not read.
    files_ignored: int = 0
    ignored_examples: list[str] = field(default_factory=list)  # a few of their paths

    def skip(self, reason: str, source: str = "", detail: str = "") -> None:
        """Count one record that was seen and not yielded (counts it in records_total too)."""
        self.records_total += 1
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if source or detail:
            shown = self.examples.setdefault(reason, [])
            if len(shown) < MAX_EXAMPLES:
                shown.append(f"{source}: {detail}" if source and detail else source or detail)

    def count_page(self, page: Page) -> None:
        """Count one yielded page (or image)."""
        self.records_total += 1
        if page.kind == "image":
            self.images += 1
            return
        self.pages_read += 1
        meta = page.meta
        if page.kind == "revisit":
            self.revisits += 1
        if meta.get("cut_at") is not None:
            self.cut += 1
        if meta.get("sniffed"):
            self.sniffed += 1
        if meta.get("content_decoding") == "partial":
            self.partial_decodes += 1

    def ignore_file(self, path: str) -> None:
        """Note a file of a folder that is not an input (not a record: records_total is unchanged)."""
        self.files_ignored += 1
        if len(self.ignored_examples) < MAX_EXAMPLES:
            self.ignored_examples.append(path)

    def error(self, message: str) -> None:
        """Note a problem with a whole file (kept to one line)."""
        self.errors.append(" ".join(message.split()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "records_total": self.records_total,
            "pages_read": self.pages_read,
            "revisits": self.revisits,
            "images": self.images,
            "skipped": dict(sorted(self.skipped.items())),
            "skipped_total": sum(self.skipped.values()),
            "cut": self.cut,
            "sniffed": self.sniffed,
            "partial_decodes": self.partial_decodes,
            "errors": list(self.errors),
            "skip_examples": {k: list(v) for k, v in sorted(self.examples.items())},
            "files_ignored": self.files_ignored,
            "files_ignored_examples": list(self.ignored_examples),
        }

    def merge(self, other: SourceStats) -> None:
        for name in ("records_total", "pages_read", "cut", "images", "revisits", "sniffed", "partial_decodes", "files_ignored"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for reason, n in other.skipped.items():
            self.skipped[reason] = self.skipped.get(reason, 0) + n
        for reason, shown in other.examples.items():
            mine = self.examples.setdefault(reason, [])
            mine.extend(shown[: max(0, MAX_EXAMPLES - len(mine))])
        self.errors.extend(other.errors)
        self.ignored_examples.extend(other.ignored_examples[: max(0, MAX_EXAMPLES - len(self.ignored_examples))])

    def consistent(self) -> bool:
        """The accounting invariant holds."""
        return self.records_total == self.pages_read + self.images + sum(self.skipped.values())
