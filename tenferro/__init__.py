"""tenferro: eager tensors with exact derivatives through einsum and dense linear algebra.

The public contract is DESIGN.md §1; every name below is part of it.
"""
import math as _math

from ._errors import (AxisError, DTypeError, GaugeError, GraphFreedError, IndexingError,
                      InPlaceError, LinAlgError, ShapeError, TenferroError,
                      UnsupportedADError)
from ._tensor import Tensor, as_tensor, tensor, install_methods as _install_methods
from ._dtypes import *  # noqa: F401,F403  (bool, int8, ..., complex128; result_type, ...)
from ._dtypes import bool, __array_namespace_info__  # noqa: F401,A004
from ._ops.elementwise import *  # noqa: F401,F403
from ._ops.elementwise import abs, pow  # noqa: F401  (shadow builtins on purpose)
from ._ops.reductions import *  # noqa: F401,F403
from ._ops.reductions import sum  # noqa: F401
from ._ops.structure import *  # noqa: F401,F403
from ._ops.einsum import *  # noqa: F401,F403
from ._ops.creation import *  # noqa: F401,F403
from ._ops.manipulation import *  # noqa: F401,F403
from ._ops.searching import *  # noqa: F401,F403
from ._ops.sorting import *  # noqa: F401,F403
from ._ops.sets import *  # noqa: F401,F403
from ._ops import inplace as _inplace  # noqa: F401  (t[i] = v, t += u, t.at[i])
from . import _numpy  # noqa: F401  (NumPy's non-differentiable functions on tensors)
from .autograd import (BackwardOptions, GradOptions, backward, enable_grad, grad,
                       is_grad_enabled, no_grad, set_grad_enabled, value_and_grad, vjp)
from . import forward as forward_ad
from .forward import hvp, jvp
from .custom import custom_jvp, custom_root, custom_vjp, fixed_point
from .functional import checkpoint, hessian, hessp, jacobian, linear_operator
from . import linalg
from .linalg.products import vecdot  # noqa: F401  (the array API has it at top level too)
from . import fft
from . import stats
from . import special
# the builder spelling lives at top level too: tf.svd_ad(a).run(), tf.qr_ad(a).run(), ...
globals().update({_n: getattr(linalg, _n) for _n in dir(linalg) if _n.endswith("_ad")})
from . import autograd, _tensor as _tensor_module
from .builders import Builder, builder
from . import testing

_install_methods()
_tensor_module._autograd = autograd

__version__ = "0.1.0"
__array_api_version__ = "2024.12"   # the namespace is this module (Tensor.__array_namespace__)
e, inf, nan, pi = _math.e, _math.inf, _math.nan, _math.pi
newaxis = None
