"""Data types of the namespace: the dtype objects, promotion with Python scalars, the data
type functions and the inspection namespace."""
import numpy as np
import pytest

import tenferro as tf

ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
       "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", ALL)
def test_dtype_objects_are_numpys(name):
    dt = getattr(tf, name)
    assert dt == np.dtype(name) and tf.tensor([1], dtype=dt).dtype == dt
    assert tf.tensor([1], dtype=dt).dtype == getattr(np, name if name != "bool" else "bool_")


@pytest.mark.parametrize("dtype,scalar,expected", [
    ("int8", 1, "int8"), ("int8", 1.5, "float64"), ("uint8", 2, "uint8"),
    ("bool", 1, "int64"), ("bool", True, "bool"), ("float32", 2, "float32"),
    ("float32", 0.5, "float32"), ("float32", 1j, "complex64"), ("int64", 1j, "complex128"),
])
def test_python_scalars_are_weak(dtype, scalar, expected):
    t = tf.ones(3, dtype=getattr(tf, dtype))
    assert (t + scalar).dtype == np.dtype(expected)
    assert (scalar * t).dtype == np.dtype(expected)
    assert tf.result_type(t, scalar) == np.dtype(expected)


def test_python_int_out_of_range():
    with pytest.raises(tf.DTypeError, match="does not fit"):
        tf.ones(2, dtype=tf.int8) + 1000


@pytest.mark.parametrize("a,b", [("int8", "int16"), ("uint8", "int8"), ("float32", "float64"),
                                 ("float32", "complex64"), ("float64", "complex64"),
                                 ("int64", "float32"), ("bool", "int8")])
def test_tensor_promotion_is_numpys(a, b):
    x, y = tf.ones(2, dtype=getattr(tf, a)), tf.ones(2, dtype=getattr(tf, b))
    expected = np.result_type(np.dtype(a), np.dtype(b))
    assert (x + y).dtype == expected == tf.result_type(x, y) == tf.result_type(a, b)


def test_transcendental_functions_of_integers_give_float64():
    for dt in (tf.bool, tf.int8, tf.uint8, tf.int16, tf.int64):
        t = tf.ones(2, dtype=dt)
        assert tf.exp(t).dtype == np.float64 and tf.sqrt(t).dtype == np.float64
        assert tf.linalg.norm(tf.ones((2, 2), dtype=dt)).dtype == np.float64
    assert (tf.arange(3) / 2).dtype == np.float64
    assert tf.square(tf.arange(3, dtype=tf.int16)).dtype == np.int16


def test_float_result_type_is_numpy2_with_float64_for_integers():
    """The one promotion of the functions with a floating-point result (tf.special,
    tf.stats, atan2/hypot/...): NumPy 2's result_type (Python numbers weak), float64 where
    that is an integer or bool dtype."""
    from tenferro._dtypes import float_result_type as frt
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    assert frt(tf.int64, tf.float32) == f64 and frt(tf.float32, tf.int64) == f64
    assert frt(tf.int32, tf.float32) == f64 and frt(tf.uint64, tf.float32) == f64
    assert frt(tf.int16, tf.float32) == f32 and frt(tf.int8, tf.float32) == f32
    assert frt(tf.bool, tf.float32) == f32 and frt(tf.uint8, tf.complex64) == np.complex64
    for dt in (tf.bool, tf.int8, tf.uint8, tf.int16, tf.int64, tf.uint64):
        assert frt(dt) == f64 and frt(dt, dt) == f64
    assert frt(tf.uint64, tf.int64) == f64           # NumPy: float64 too
    assert frt(tf.float32, 0.5) == f32 and frt(2, tf.float32) == f32      # weak
    assert frt(tf.float32, 1j) == np.complex64 and frt(tf.int8, 0.5) == f64
    assert frt(0.5) == f64 and frt(2, 3) == f64 and frt(1j) == np.complex128 and frt() == f64
    assert frt(tf.ones(2, dtype=tf.int64), np.ones(2, np.float32)) == f64   # tensors, arrays
    with pytest.raises(tf.DTypeError, match="float16"):
        frt(np.float16, tf.float32)


def test_data_type_functions():
    assert tf.can_cast(tf.int8, tf.int16) and not tf.can_cast(tf.int16, tf.int8)
    assert tf.can_cast(tf.ones(2, dtype=tf.float32), tf.float64)
    assert tf.isdtype(tf.int8, "signed integer") and tf.isdtype(tf.uint8, "integral")
    assert tf.isdtype(tf.float32, ("bool", "real floating"))
    assert not tf.isdtype(tf.complex64, "real floating") and tf.isdtype(tf.bool, tf.bool)
    assert tf.finfo(tf.float32).eps == np.finfo(np.float32).eps
    assert tf.finfo(tf.complex128).dtype == np.float64
    assert tf.finfo(tf.ones(1)).bits == 64
    info = tf.finfo(tf.complex64)   # the standard asks for Python scalars, not np.float32
    assert info.dtype == np.float32 and type(info.bits) is int
    assert all(type(getattr(info, f)) is float
               for f in ("eps", "max", "min", "smallest_normal"))
    assert info.smallest_normal == float(np.finfo(np.float32).smallest_normal)
    assert type(tf.iinfo(tf.uint64).max) is int and tf.iinfo(tf.uint64).max == 2**64 - 1
    assert tf.iinfo(tf.int16).max == 32767 and tf.iinfo(tf.uint8).min == 0
    with pytest.raises(tf.DTypeError, match="iinfo"):
        tf.finfo(tf.int8)
    with pytest.raises(tf.DTypeError, match="finfo"):
        tf.iinfo(tf.float32)
    with pytest.raises(ValueError, match="kind"):
        tf.isdtype(tf.int8, "integer")
    with pytest.raises(tf.DTypeError, match="float16"):
        tf.result_type(np.float16)
    with pytest.raises(tf.DTypeError, match="at least one"):
        tf.result_type()


@pytest.mark.parametrize("scalars", [(1, 2.0), (1,), (True,), (True, 2), (1j, 2.0),
                                     (False, 0.5)])
def test_result_type_of_python_scalars_alone_is_numpys(scalars):
    # SciPy (signal's _logspace) calls result_type on Python scalars and expects NumPy's
    # default dtypes (or a ValueError); an int and a float give float64, as in NumPy
    assert tf.result_type(*scalars) == np.result_type(*scalars)
    assert tf.result_type(*scalars) == tf.asarray(sum(scalars) if len(scalars) > 1
                                                  else scalars[0]).dtype


def test_inspection_namespace():
    info = tf.__array_namespace_info__()
    assert tf.__array_api_version__ == "2024.12"
    assert info.capabilities()["boolean indexing"] is True
    assert info.default_device() == "cpu" and info.devices() == ["cpu"]
    assert info.default_dtypes() == {"real floating": tf.float64,
                                     "complex floating": tf.complex128,
                                     "integral": tf.int64, "indexing": tf.int64}
    assert list(info.dtypes()) == ALL
    assert list(info.dtypes(kind="unsigned integer")) == ["uint8", "uint16", "uint32",
                                                          "uint64"]
    assert list(info.dtypes(kind=("bool", "complex floating"))) == ["bool", "complex64",
                                                                    "complex128"]
    with pytest.raises(ValueError):
        info.dtypes(kind="integer")
    with pytest.raises(ValueError):
        info.default_dtypes(device="gpu")
    assert tf.e == np.e and tf.pi == np.pi and tf.newaxis is None
    assert tf.isnan(tf.asarray(tf.nan)) and tf.inf == float("inf")


def test_eps_of_is_the_real_types_machine_epsilon():
    # the one table of the rules' tolerances (_dtypes.EPS); eps_of takes dtypes, types and
    # names, and falls back to np.finfo outside the table
    from tenferro._dtypes import EPS, eps_of
    for t, r in [(np.float32, np.float32), (np.float64, np.float64),
                 (np.complex64, np.float32), (np.complex128, np.float64)]:
        want = float(np.finfo(r).eps)
        assert EPS[np.dtype(t)] == want
        assert eps_of(np.dtype(t)) == eps_of(t) == eps_of(np.dtype(t).name) == want
        assert type(eps_of(t)) is float
    assert eps_of(np.float16) == float(np.finfo(np.float16).eps)
