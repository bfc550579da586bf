"""tf.linalg: decompositions, solvers and matrix functions (docs/design.md#ops).

Each module holds one family: its public functions, primals (through ``_lapack``), reverse
and forward rules, and error messages.
"""
from .svd import *  # noqa: F401,F403
from . import svd_truncated as _svd_truncated  # noqa: F401  (its op; svd() calls it)
from .eigh import *  # noqa: F401,F403
from .eig import *  # noqa: F401,F403
from .qr import *  # noqa: F401,F403
from .lu import *  # noqa: F401,F403
from .cholesky import *  # noqa: F401,F403
from .triangular import *  # noqa: F401,F403
from .solve import *  # noqa: F401,F403
from .lstsq import *  # noqa: F401,F403
from .det import *  # noqa: F401,F403
from .matfuncs import *  # noqa: F401,F403
from .products import *  # noqa: F401,F403
from .eigsh import *  # noqa: F401,F403
from .svds import *  # noqa: F401,F403
from .sylvester import *  # noqa: F401,F403
from .banded import *  # noqa: F401,F403
from .schur_funcs import *  # noqa: F401,F403
