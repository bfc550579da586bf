"""tenferro: eager tensors with exact derivatives through einsum and dense linear algebra.

The public contract is docs/design.md#api; every name below is part of it.
"""
import math as _math

# `name as name`: the explicit re-export a type checker needs in a typed package (py.typed)
from ._errors import (AxisError as AxisError, DTypeError as DTypeError,
                      GaugeError as GaugeError, GraphFreedError as GraphFreedError,
                      IntegrationError as IntegrationError, DistributedError as DistributedError,
                      IndexingError as IndexingError, InPlaceError as InPlaceError,
                      LinAlgError as LinAlgError, ShapeError as ShapeError,
                      TenferroError as TenferroError, UnsupportedADError as UnsupportedADError)
from ._tensor import (Tensor as Tensor, as_tensor as as_tensor, tensor as tensor,
                      install_methods as _install_methods)
from ._dtypes import *  # noqa: F401,F403  (bool, int8, ..., complex128; result_type, ...)
from ._dtypes import (bool as bool,  # noqa: F401,A004
                      __array_namespace_info__ as __array_namespace_info__)
from ._ops.elementwise import *  # noqa: F401,F403
from ._ops.elementwise import abs as abs, pow as pow  # noqa: F401  (shadow builtins on purpose)
from ._ops.reductions import *  # noqa: F401,F403
from ._ops.reductions import sum as sum  # noqa: F401
from ._ops.structure import *  # noqa: F401,F403
from ._ops.einsum import *  # noqa: F401,F403
from ._ops.creation import *  # noqa: F401,F403
from ._ops.manipulation import *  # noqa: F401,F403
from ._ops.searching import *  # noqa: F401,F403
from ._ops.sorting import *  # noqa: F401,F403
from ._ops.sets import *  # noqa: F401,F403
from ._ops import inplace as _inplace  # noqa: F401  (t[i] = v, t += u, t.at[i])
from . import _numpy  # noqa: F401  (NumPy's non-differentiable functions on tensors)
from .autograd import (BackwardOptions as BackwardOptions, GradOptions as GradOptions,
                       backward as backward, enable_grad as enable_grad, grad as grad,
                       is_grad_enabled as is_grad_enabled, no_grad as no_grad,
                       set_grad_enabled as set_grad_enabled, value_and_grad as value_and_grad,
                       vjp as vjp)
from . import forward as forward
forward_ad = forward
from .forward import hvp as hvp, jvp as jvp
from .custom import (custom_jvp as custom_jvp, custom_root as custom_root,
                     custom_vjp as custom_vjp, fixed_point as fixed_point)
from .functional import (checkpoint as checkpoint, hessian as hessian, hessp as hessp,
                         jacobian as jacobian, linear_operator as linear_operator)
from .compile import compile as compile, Compiled as Compiled  # noqa: A004 (torch.compile's name)
from . import linalg as linalg
from .linalg.products import vecdot as vecdot  # (the array API has it at top level too)
from . import fft as fft
from . import stats as stats
from . import special as special
from . import integrate as integrate
from . import signal as signal
from . import ndimage as ndimage
from . import distributed as distributed
# the builder spelling lives at top level too: tf.svd_ad(a).run(), tf.qr_ad(a).run(), ...
globals().update({_n: getattr(linalg, _n) for _n in dir(linalg) if _n.endswith("_ad")})
from . import autograd as autograd, _tensor as _tensor_module
from .builders import Builder as Builder, builder as builder
from . import testing as testing
from ._threads import (set_num_threads as set_num_threads, num_threads as num_threads,
                       get_num_threads as get_num_threads, ThreadCountError as ThreadCountError)

_install_methods()
_tensor_module._autograd = autograd

__version__ = "0.1.0"
__array_api_version__ = "2024.12"   # the namespace is this module (Tensor.__array_namespace__)
e, inf, nan, pi = _math.e, _math.inf, _math.nan, _math.pi
newaxis = None

# NumPy's and SciPy's OpenBLAS are loaded now: make their idle threads sleep sooner, or the
# two pools take the cores from each other (tenferro/_threads.py, "Two OpenBLAS thread pools")
from ._threads import _shorten_blas_spin  # noqa: E402
_shorten_blas_spin()
del _shorten_blas_spin
