"""The rule registry as a table: ``python -m tenferro.rules``.

Generated from the registered ops (``tenferro._ops.registry.OPS``), not written by hand:
vjp/jvp say whether the op has that rule, "2nd order" whether its rules are written in
differentiable ops (so grad-of-grad and forward-over-reverse work), "complex" whether it
accepts complex input, "batched" whether leading dimensions broadcast/batch.
"""
from __future__ import annotations

import tenferro  # noqa: F401  (registers every op)
from tenferro._ops.registry import OPS

__all__ = ["table", "main"]


def table() -> list[tuple[str, str, str, str, str, str]]:
    """Rows ``(op, vjp, jvp, 2nd order, complex, batched)`` as strings, sorted by op name."""
    yes = {True: "yes", False: "-"}
    rows: list[tuple[str, str, str, str, str, str]] = []
    for name in sorted(OPS):
        op = OPS[name]
        rows.append((name, yes[op.vjp is not None], yes[op.jvp is not None],
                     yes[op.vjp is not None and op.second_order], yes[op.complex],
                     yes[op.batched]))
    return rows


def main() -> None:
    """Print :func:`table` with a header and the number of ops."""
    head = ("op", "vjp", "jvp", "2nd order", "complex", "batched")
    rows = table()
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    fmt = "  ".join("{:<%d}" % w for w in widths)
    print(fmt.format(*head))
    print(fmt.format(*("-" * w for w in widths)))
    for r in rows:
        print(fmt.format(*r))
    print(f"\n{len(rows)} ops")


if __name__ == "__main__":
    main()
