"""Sphinx configuration of tenferro's documentation.

Build:  pip install ".[docs]" && python scripts/check_docs.py
   or:  sphinx-build -W --keep-going -b html docs docs/_build/html
The API reference (docs/api/) and the example pages (docs/examples/) are generated at
build time by docs/_ext/tenferro_docs.py; docs/_generated/ holds files the examples wrote.
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

import tenferro  # noqa: E402  (the installed package; its version goes on every page)

project = "tenferro"
author = "the tenferro developers"
copyright = "the tenferro developers"
release = version = tenferro.__version__

extensions = [
    "myst_parser",                       # the Markdown pages (guide, docs/*.md)
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",               # docstrings mix NumPy-style sections and prose
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",            # MathJax 3 copied into _static/: math renders offline
    "matplotlib.sphinxext.plot_directive",  # figures drawn at build time (concepts page)
    "tenferro_docs",                     # API/example page generation, example runner
]

# intersphinx (links to NumPy's and SciPy's docs) is deliberately OFF: it downloads
# objects.inv from numpy.org / docs.scipy.org at every build, and the machines this
# project builds on (developers' and CI's) reach PyPI and Debian only; the local
# alternative, Debian's python-scipy-doc, is a 138 MB install. A build must not depend on
# the network. NumPy/SciPy names therefore render as code, not links.

# Math is rendered by MathJax served from the built site (_static/mathjax/, copied there by
# sphinx-mathjax-offline, which bundles MathJax 3.2.2): Sphinx's default loads it from a
# CDN, and a reader without internet then sees raw TeX. scripts/check_docs.py fails when a
# page loads a script from the network or shows TeX outside a math node.
mathjax_path = "mathjax/tex-chtml.js"
# Only the delimiters Sphinx writes around math nodes: a "$" in prose or code stays text.
mathjax3_config = {"tex": {"inlineMath": [["\\(", "\\)"]],
                           "displayMath": [["\\[", "\\]"]],
                           "processEscapes": False}}

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "_ext", "README.md", "**/.ipynb_checkpoints"]

myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3                 # [views](guide/concepts.md#views) links resolve

autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"               # signatures keep their defaults; types are prose
autodoc_inherit_docstrings = True
autosummary_generate = False             # pages are written by tenferro_docs
add_module_names = False
napoleon_numpy_docstring = True
napoleon_google_docstring = False        # "Returns:" in prose is not a Google section
napoleon_use_rtype = False

# Examples run at build time with these arguments ({outdir}: where they may write PNGs).
# trg_ising runs with chi = 8 and 12 coarse-graining steps instead of its default
# (chi 16 and 24, 20 steps, ~55 s of CPU time): about 1 s, same code path.
tenferro_example_args = {
    "fit_demo": [],
    "ode_fit": [],                       # ~5 s of CPU time
    "distributed_fit": [],               # a 2-process LocalCluster: ~15-25 s
    "ctmrg_ising": ["--chi", "8", "--betas", "0.40", "0.45", "0.48"],
    "ipeps_heisenberg": [],              # the full run: ~2 s
    "trg_ising": ["--chi", "8", "--iterations", "12", "--betas", "0.40", "0.42",
                  "0.4406867935097715", "0.46", "0.48", "--plot", "{outdir}/trg.png"],
    "mps_energy": ["--L", "12", "--D", "4", "--h", "0.5", "1.0", "--maxiter", "800",
                   "--plot", "{outdir}/mps.png"],
    "lattice_network": ["--L", "3", "4", "5", "--betas", "0.3", "0.44", "0.6",
                        "--plot", "{outdir}/lattice.png"],
}

plot_include_source = False
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]
plot_rcparams = {"figure.figsize": (9, 4)}

html_theme = "alabaster"
html_title = f"tenferro {release}"
html_theme_options = {
    "description": "Eager tensors with exact reverse, forward and second-order derivatives",
    "page_width": "1260px",
    "sidebar_width": "240px",
    "body_max_width": "none",           # wide output tables of the examples
    "fixed_sidebar": True,
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html",
                        "searchbox.html"]}
html_static_path = []
