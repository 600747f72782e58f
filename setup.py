"""Build the native kernels with Cython: the text path (src/pagetwin/text/_fast.pyx), the
block walk over lexbor's DOM (src/pagetwin/html/_walk.pyx), pass 1's per-page template
statistics (src/pagetwin/html/_stats.pyx), pass 1's page-level rules (src/pagetwin/html/_page.pyx) and the text fingerprints' hashing and MinHash
(src/pagetwin/fingerprints/_sketch.pyx), the link step's edge rows (src/pagetwin/_edges.pyx), and the WARC reader's record heads
(src/pagetwin/sources/_warc.pyx).

Everything else is in pyproject.toml. The package still runs without the compiled modules (it
falls back to the pure-Python references and says so once), but `pip install` builds them.
The walk needs no selectolax or lexbor headers to build: it declares the few lexbor structs it
reads, and checks them against the installed selectolax when it starts (html/blocks.py).
"""

from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension("pagetwin.text._fast", ["src/pagetwin/text/_fast.pyx"], extra_compile_args=["-O2"]),
    Extension("pagetwin.html._walk", ["src/pagetwin/html/_walk.pyx"], extra_compile_args=["-O2"]),
    # -O3: MinHash's loop of minima is vectorized only there (GCC 12), 2x faster with AVX-512
    Extension("pagetwin.fingerprints._sketch", ["src/pagetwin/fingerprints/_sketch.pyx"], extra_compile_args=["-O3"]),
    # (No fused multiply-add: the slot decisions and the region scores must round as the Python references' do.)
    Extension("pagetwin.html._stats", ["src/pagetwin/html/_stats.pyx"], extra_compile_args=["-O2", "-ffp-contract=off"]),
    Extension("pagetwin.html._page", ["src/pagetwin/html/_page.pyx"], extra_compile_args=["-O2", "-ffp-contract=off"]),
    Extension("pagetwin._edges", ["src/pagetwin/_edges.pyx"], extra_compile_args=["-O2"]),
    Extension("pagetwin.sources._warc", ["src/pagetwin/sources/_warc.pyx"], extra_compile_args=["-O2"]),
]

setup(
    ext_modules=cythonize(extensions, compiler_directives={"language_level": "3"}, quiet=True),
    exclude_package_data={p: ["*.c", "*.pyx"] for p in ("pagetwin", "pagetwin.text", "pagetwin.html", "pagetwin.fingerprints", "pagetwin.sources")},  # sources of the compiled modules
)
