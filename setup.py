"""Build the native kernels of the text path (src/pagetwin/text/_fast.pyx) with Cython.

Everything else is in pyproject.toml. The package still runs without the compiled module (it
falls back to the pure-Python references and says so once), but `pip install` builds it.
"""

from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [Extension("pagetwin.text._fast", ["src/pagetwin/text/_fast.pyx"], extra_compile_args=["-O2"])]

setup(
    ext_modules=cythonize(extensions, compiler_directives={"language_level": "3"}, quiet=True),
    exclude_package_data={"pagetwin.text": ["*.c", "*.pyx"]},  # sources of the compiled module
)
