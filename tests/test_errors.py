"""tenferro/_errors.py: the exception classes, and that an invalid argument value a user can
pass raises a TenferroError that is also the ValueError NumPy/SciPy users catch (issue 24:
tf.linalg.svd with a negative rtol raised a plain ValueError)."""
import pathlib
import re

import numpy as np
import pytest

import tenferro as tf

PACKAGE = pathlib.Path(tf.__file__).resolve().parent


def test_hierarchy():
    for cls, base in ((tf.ShapeError, ValueError), (tf.AxisError, IndexError),
                      (tf.AxisError, ValueError), (tf.IndexingError, IndexError),
                      (tf.DTypeError, TypeError), (tf.GaugeError, ValueError),
                      (tf.LinAlgError, np.linalg.LinAlgError),
                      (tf.UnsupportedADError, NotImplementedError),
                      (tf.GraphFreedError, RuntimeError), (tf.InPlaceError, RuntimeError)):
        assert issubclass(cls, tf.TenferroError) and issubclass(cls, base), cls


def _bad_argument_calls():
    eye = np.eye(3)
    t = tf.tensor(eye)
    x = tf.tensor([1.0, 2.0, 3.0])
    v4 = tf.tensor(np.ones(4), requires_grad=True)   # NumPy functions run tenferro's op
    xg = tf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    return {
        "svd rtol < 0": lambda: tf.linalg.svd(eye, rtol=-1),
        "svd atol nan": lambda: tf.linalg.svd(eye, atol=float("nan")),
        "svd derivative_eps < 0": lambda: tf.linalg.svd(eye, derivative_eps=-1.0),
        "eigh UPLO": lambda: tf.linalg.eigh(eye, UPLO="X"),
        "qr mode": lambda: tf.linalg.qr(eye, mode="economic"),
        "solve_triangular trans": lambda: tf.linalg.solve_triangular(eye, eye, trans=5),
        "isdtype kind": lambda: tf.isdtype(tf.int8, "integer"),
        "info dtypes kind": lambda: tf.__array_namespace_info__().dtypes(kind="ints"),
        "info device": lambda: tf.__array_namespace_info__().default_dtypes(device="gpu"),
        "api_version": lambda: t.__array_namespace__(api_version="2000.01"),
        "__array__ copy=False": lambda: t.__array__(np.float32, copy=False),
        "tensor device": lambda: tf.asarray([1.0], device="gpu"),
        "astype device": lambda: tf.astype(t, tf.float32, device="gpu"),
        "asarray copy=False": lambda: tf.asarray(t, dtype=tf.float32, copy=False),
        "arange step 0": lambda: tf.arange(0, 1, 0),
        "reshape copy=False": lambda: tf.reshape(t.mT[:, :2], (6,), copy=False),
        "searchsorted side": lambda: tf.searchsorted(x, x, side="middle"),
        "meshgrid indexing": lambda: tf.meshgrid(x, x, indexing="xx"),
        "np.take mode": lambda: np.take(x, [0], mode="bounce"),
        "jacobian mode": lambda: tf.jacobian(tf.exp, mode="sideways")(x),
        "argnums empty": lambda: tf.jacobian(tf.exp, argnums=())(x),
        "argnums duplicates": lambda: tf.jacobian(tf.exp, argnums=(0, 0))(x),
        "multigammaln d": lambda: tf.special.multigammaln(x + 2, 0),
        "multigammaln a": lambda: tf.special.multigammaln(x, 4),
        "np.cross dims": lambda: np.cross(v4, v4),
        "np.interp lengths": lambda: np.interp(x, x, xg[:2]),
        "norm ord": lambda: tf.linalg.norm(eye, 3),
    }


@pytest.mark.parametrize("case", sorted(_bad_argument_calls()))
def test_bad_argument_values_raise_a_tenferro_value_error(case):
    with pytest.raises(tf.TenferroError) as info:
        _bad_argument_calls()[case]()
    assert isinstance(info.value, ValueError), type(info.value).__mro__
    assert str(info.value)


def test_no_plain_value_error_is_raised_in_the_python_sources():
    """Every ``raise ValueError(`` of the package became a TenferroError (ShapeError or a
    domain-specific one); the compiled kernels' checks are internal (their callers validate
    first) and are not counted."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "_kernels" in path.parts:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\braise\s+ValueError\b", line):
                offenders.append(f"{path.relative_to(PACKAGE)}:{n}")
    assert offenders == []
