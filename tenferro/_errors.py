"""Exception classes of tenferro (docs/design.md#errors). All subclass :class:`TenferroError`.

Each also subclasses the standard exception a NumPy/SciPy user would catch, so
``except ValueError`` or ``except numpy.linalg.LinAlgError`` keep working.
"""
import numpy as np

__all__ = [
    "TenferroError", "ShapeError", "DTypeError", "LinAlgError", "GaugeError",
    "UnsupportedADError", "GraphFreedError", "InPlaceError", "AxisError", "IndexingError",
    "IntegrationError", "DistributedError",
]


class TenferroError(Exception):
    """Base class of every error raised by tenferro."""


class ShapeError(TenferroError, ValueError):
    """Shapes do not match, do not broadcast, or are not what the op needs; also the
    ValueError of every other argument value an op does not accept (a negative rtol, an
    unknown mode, UPLO or ord, copy=False where a copy is needed), as NumPy raises
    ValueError for them."""


class AxisError(ShapeError, IndexError):
    """An axis out of range: a ShapeError (so a ValueError) and an IndexError, like
    ``numpy.exceptions.AxisError`` (the array API asks for IndexError)."""


class IndexingError(TenferroError, IndexError):
    """An index out of range, or an index array that is not of integer or bool dtype."""


class DTypeError(TenferroError, TypeError):
    """A dtype tenferro does not support (float16, integer where a float is needed, object...)."""


class LinAlgError(TenferroError, np.linalg.LinAlgError):
    """Singular or non-positive-definite matrix, non-finite entries, or no convergence."""


class GaugeError(TenferroError, ValueError):
    """The loss depends on the free phase of complex singular/eigen vectors."""


class UnsupportedADError(TenferroError, NotImplementedError):
    """A derivative that does not exist or that tenferro does not implement."""


class GraphFreedError(TenferroError, RuntimeError):
    """A backward pass reached a part of the graph whose saved values were freed."""


class InPlaceError(TenferroError, RuntimeError):
    """An in-place change (``t[i] = v``, ``t += u``) that would corrupt a gradient: of a
    leaf that requires grad, or of a tensor a recorded op still needs for its backward."""


class IntegrationError(TenferroError, RuntimeError):
    """An ODE solve that failed (SciPy's ``success`` is False: a step size below the
    spacing of floating-point numbers, a stiff problem for an explicit method, a solution
    that blows up) or a right-hand side that returned a non-finite value."""


class DistributedError(TenferroError, RuntimeError):
    """Work sent to an executor's workers that cannot run or did not complete
    (``tenferro.distributed``): the executor is not a ``concurrent.futures.Executor``, a
    shard or function cannot be pickled, a worker died, or the function raised on a
    worker (the message names the shard or slice). No partial result is returned."""
