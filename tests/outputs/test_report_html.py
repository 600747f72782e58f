"""outputs.report_html: the report's sections escape what they are given."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.outputs import report_html as view
from pagetwin.outputs.report import e


def test_histogram_has_a_bar_and_a_count_per_bucket():
    svg = view.histogram({"1": 900, "2": 40, "3-4": 3})
    assert svg.count("<rect") == 3 and ">900<" in svg and ">3-4<" in svg
    heights = [float(h) for h in re.findall(r'<rect x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)"', svg)]
    assert heights[0] > heights[1] > heights[2] > 0  # log scale, still ordered
    assert view.histogram({}) == "<p class=muted>no clusters</p>"


def _pair(text: str) -> dict:
    page = {"id": text, "url": text, "title": text, "cluster": "c1", "keep": True}
    return {"a": page, "b": dict(page, keep=False), "same_cluster": True, "edge": {"kind": text}, "shared_share_of_a": 0.5,
            "algorithms": [{"algorithm": "minhash", "score": 0.9, "passed": True, "shared_keys": 3, "keys": [text], "detail": {text: text}}],
            "passages": [{"op": "same", "text": text}, {"op": "a", "text": text}, {"op": "b", "text": text}], "passages_more": 0}  # fmt: skip


@given(st.text(alphabet=st.sampled_from("<>&\"'/ascript=x "), min_size=1, max_size=30))
@settings(max_examples=60, deadline=None)
def test_a_pair_never_carries_markup_from_its_text(text):
    html = view.pair(0, _pair(text))
    # All of the text is there escaped; no tag is made of it.
    assert e(text) in html
    tags = set(re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", html))
    assert tags <= {"div", "h3", "table", "thead", "tr", "th", "tbody", "td", "p", "span"}


def test_templates_section_classes_its_blocks():
    t = {"note": "", "views": [{"host": "h", "site": "h", "title": "<t>", "url": "u", "learned": True, "blocks_more": 0,
                                "sizes": {"chars": 10, "template": 5, "noise": 2},
                                "blocks": [{"class": "template", "text": "menu"}, {"class": "noise", "text": "<b>x</b>"}, {"class": "kept", "text": "body"}]}]}  # fmt: skip
    html = view.templates(t)
    assert '<p class="template">menu</p>' in html and '<p class="noise">&lt;b&gt;x&lt;/b&gt;</p>' in html
    assert "template 50.0%" in html and "noise 20.0%" in html and "&lt;t&gt;" in html
