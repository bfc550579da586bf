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
    """Base class of every error raised by tenferro.

    Catch it to handle any tenferro error; each subclass also subclasses the standard
    exception a NumPy/SciPy user would catch (``ValueError``, ``TypeError``,
    ``numpy.linalg.LinAlgError``, ...). The message says what was wrong and what to do.
    """


class ShapeError(TenferroError, ValueError):
    """Shapes do not match, do not broadcast, or are not what the op needs.

    Also the ValueError of every other argument value an op does not accept (a negative rtol,
    an unknown mode, UPLO or ord, copy=False where a copy is needed), as NumPy raises
    ValueError for them. Raised before anything is computed or recorded; fix the argument the
    message names (reshape, broadcast or pass the axis it asks for).

    Examples
    --------
    >>> tf.ones(2) + tf.ones(3)
    Traceback (most recent call last):
        ...
    tenferro._errors.ShapeError: ...shapes (2,), (3,) do not broadcast...
    """


class AxisError(ShapeError, IndexError):
    """An axis out of range: a ShapeError (so a ValueError) and an IndexError.

    Like ``numpy.exceptions.AxisError`` (the array API asks for IndexError). Pass an axis in
    ``-ndim..ndim-1``.
    """


class IndexingError(TenferroError, IndexError):
    """An index out of range, or an index array that is not of integer or bool dtype.

    An IndexError; index within the shape the message gives, with integer or bool indices.
    """


class DTypeError(TenferroError, TypeError):
    """A dtype tenferro does not support (float16, integer where a float is needed, object...).

    A TypeError. Cast the input (``x.astype(tf.float64)``), or, for complex to real, take
    ``real``/``abs`` explicitly; ``requires_grad`` needs a float or complex dtype.
    """


class LinAlgError(TenferroError, np.linalg.LinAlgError):
    """Singular or non-positive-definite matrix, non-finite entries, or no convergence.

    A ``numpy.linalg.LinAlgError``. The message names the batch index of the matrix at
    fault; regularize the input, check it for NaN/Inf (or pass ``check_finite=False`` where
    NaN propagation is wanted), or raise the iteration limits it names.
    """


class GaugeError(TenferroError, ValueError):
    """The loss depends on the free phase of complex singular/eigen vectors.

    Raised by the backward pass of svd/eigh/eigsh/svds/eig for complex input: such a loss has
    no well-defined gradient. Make the loss gauge-invariant (use ``|v|**2``, projectors
    ``v v^H``, or fix the phase explicitly), or pass ``check_gauge=False`` to skip the check.
    """


class UnsupportedADError(TenferroError, NotImplementedError):
    """A derivative that does not exist or that tenferro does not implement.

    A NotImplementedError. The message names the op and the case; use another formulation
    (e.g. ``det`` instead of ``slogdet`` at a singular matrix), pass ``t.detach()`` where no
    gradient should flow, or write a rule with :func:`tenferro.custom_vjp`.
    """


class GraphFreedError(TenferroError, RuntimeError):
    """A backward pass reached a part of the graph whose saved values were freed.

    A RuntimeError: an earlier backward pass freed them. Pass ``retain_graph=True`` to the
    first :func:`tenferro.grad`/``backward`` call to differentiate through the graph twice.

    Examples
    --------
    >>> x = tf.tensor([1.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> y.backward()
    Traceback (most recent call last):
        ...
    tenferro._errors.GraphFreedError: ...pass retain_graph=True...
    """


class InPlaceError(TenferroError, RuntimeError):
    """An in-place change (``t[i] = v``, ``t += u``) that would corrupt a gradient.

    Of a leaf that requires grad, or of a tensor a recorded op still needs for its backward.
    A RuntimeError; write the out-of-place form (``t = t + u``, ``t.at[i].set(v)``) or change
    the tensor before recording.
    """


class IntegrationError(TenferroError, RuntimeError):
    """An ODE solve that failed, or a right-hand side that returned a non-finite value.

    SciPy's ``success`` is False: a step size below the spacing of floating-point numbers, a
    stiff problem for an explicit method, a solution that blows up. A RuntimeError; try an
    implicit method (``'Radau'``, ``'BDF'``, ``'LSODA'``), looser tolerances or a shorter
    interval.
    """


class DistributedError(TenferroError, RuntimeError):
    """Work sent to an executor's workers that cannot run or did not complete
    (``tenferro.distributed``): the executor is not a ``concurrent.futures.Executor``, a
    shard or function cannot be pickled, a worker died, or the function raised on a
    worker (the message names the shard or slice). No partial result is returned."""
