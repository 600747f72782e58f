import pytest

from pagetwin.config import Settings
from pagetwin.index.sqlite import Index, IndexError_


def _row(i, **kw):
    base = dict(id=f"p{i}", url=f"http://x/{i}", host="x", source="s", kind="response", crawl_date=None,
                text_len=1, payload_digest=f"sha1:{i}", refers_to_digest=None, lang="en", title="", text=None, error=None)
    base.update(kw)
    return base


def test_buckets_and_revisits(tmp_path):
    idx = Index(tmp_path / "i.sqlite", Settings().to_dict())
    idx.begin()
    pids = [idx.add_page(_row(i)) for i in range(4)]
    rv = idx.add_page(_row(9, kind="revisit", payload_digest="sha1:1", refers_to_digest="sha1:1"))
    orphan = idx.add_page(_row(10, kind="revisit", payload_digest="sha1:zz", refers_to_digest="sha1:zz"))
    idx.add_fingerprints(pids[0], {"minhash": b"a"}, {"minhash": [5, 6]})
    idx.add_fingerprints(pids[1], {"minhash": b"b"}, {"minhash": [5]})
    idx.add_fingerprints(pids[2], {"minhash": b"c"}, {"minhash": [6, 7]})
    idx.add_fingerprints(pids[3], {"minhash": b"d"}, {"minhash": [8]})
    idx.commit()
    assert sorted(idx.buckets("minhash")) == [[pids[0], pids[1]], [pids[0], pids[2]]]
    assert list(idx.revisit_pairs()) == [(pids[1], rv)]
    assert [i for i, _ in idx.orphan_revisits()] == ["p10"]
    assert idx.shared_keys("minhash", pids[0], pids[2]) == [6]
    assert idx.find_page("http://x/2") == pids[2] and idx.find_page("p3") == pids[3]
    assert orphan


def test_incompatible_settings_refused_with_the_setting_named(tmp_path):
    path = tmp_path / "i.sqlite"
    Index(path, Settings().to_dict()).close()
    s = Settings()
    s.set("minhash.shingle", 3)
    with pytest.raises(IndexError_, match="minhash.shingle"):
        Index(path, s.to_dict())
    s = Settings()
    s.set("extract.templates", False)
    with pytest.raises(IndexError_, match="extract.templates"):
        Index(path, s.to_dict())
    # a compatible run is accepted and numbered
    again = Index(path, Settings().to_dict())
    assert again.run == 2


def test_not_an_index(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(IndexError_):
        Index(path, Settings().to_dict())
