"""Pass 1's page rules made cheaper (issue 16) against their references: each fast version
must give what its reference gives, on made-up blocks and on real pages."""

from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from pagetwin.html.blocks import Blocks
from pagetwin.html.noise import _drop_other_pages, _drop_other_pages_reference

_TEXTS = ["Related articles", " Related posts: ", "More from Bob Smith", "You may also like", "Story text " * 3,
          "Top stories", "related", "", "x" * 70, "Read next!", "trending now", "Weiter lesen"]  # fmt: skip


@st.composite
def blocks_and_keep(draw):
    n = draw(st.integers(0, 30))
    parent = [draw(st.integers(-1, b - 1)) for b in range(n)]
    blocks = Blocks(
        tag=["div"] * n,
        parent=parent,
        sig=[draw(st.integers(0, 4)) for _ in range(n)],
        hash=[0] * n,
        text=[draw(st.sampled_from(_TEXTS)) for _ in range(n)],
        link=[0] * n,
        size=[draw(st.integers(0, 300)) for _ in range(n)],
    )
    keep = [draw(st.booleans()) for _ in range(n)]
    return blocks, keep


@hsettings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks_and_keep())
def test_drop_other_pages_is_its_reference(case):
    blocks, keep = case
    fast, reference = list(keep), list(keep)
    _drop_other_pages(blocks, fast)
    _drop_other_pages_reference(blocks, reference)
    assert fast == reference
