"""``python -m tenferro``: print the rule table (same as ``python -m tenferro.rules``)."""
from tenferro.rules import main

main()
