"""The ``>>>`` examples of the generated docstrings (tenferro._ops._docs renders them
under "Examples"), by qualified name. Written by scripts/gen_doc_examples.py (edit the
examples there); scripts/check_docstrings.py runs every one as a doctest."""

EXAMPLES: dict[str, str] = {
    'tenferro.exp': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.exp(x)\n'
        'tensor([1.        , 2.71828183], grad_fn=exp)\n'
        '>>> tf.grad([tf.exp(x).sum()], [x])[0]\n'
        'tensor([1.        , 2.71828183])\n'
    ),
    'tenferro.expm1': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.expm1(x)\n'
        'tensor([0.        , 1.71828183], grad_fn=expm1)\n'
        '>>> tf.grad([tf.expm1(x).sum()], [x])[0]\n'
        'tensor([1.        , 2.71828183])\n'
    ),
    'tenferro.log': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.log(x)\n'
        'tensor([0.        , 0.69314718], grad_fn=log)\n'
        '>>> tf.grad([tf.log(x).sum()], [x])[0]\n'
        'tensor([1. , 0.5])\n'
    ),
    'tenferro.log1p': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.log1p(x)\n'
        'tensor([0.        , 0.69314718], grad_fn=log1p)\n'
        '>>> tf.grad([tf.log1p(x).sum()], [x])[0]\n'
        'tensor([1. , 0.5])\n'
    ),
    'tenferro.log2': (
        '>>> x = tf.tensor([1.0, 4.0], requires_grad=True)\n'
        '>>> tf.log2(x)\n'
        'tensor([0., 2.], grad_fn=log2)\n'
        '>>> tf.grad([tf.log2(x).sum()], [x])[0]\n'
        'tensor([1.44269504, 0.36067376])\n'
    ),
    'tenferro.log10': (
        '>>> x = tf.tensor([1.0, 100.0], requires_grad=True)\n'
        '>>> tf.log10(x)\n'
        'tensor([0., 2.], grad_fn=log10)\n'
        '>>> tf.grad([tf.log10(x).sum()], [x])[0]\n'
        'tensor([0.43429448, 0.00434294])\n'
    ),
    'tenferro.sqrt': (
        '>>> x = tf.tensor([1.0, 4.0], requires_grad=True)\n'
        '>>> tf.sqrt(x)\n'
        'tensor([1., 2.], grad_fn=sqrt)\n'
        '>>> tf.grad([tf.sqrt(x).sum()], [x])[0]\n'
        'tensor([0.5 , 0.25])\n'
    ),
    'tenferro.sin': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.sin(x)\n'
        'tensor([0.        , 0.84147098], grad_fn=sin)\n'
        '>>> tf.grad([tf.sin(x).sum()], [x])[0]\n'
        'tensor([1.        , 0.54030231])\n'
    ),
    'tenferro.cos': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.cos(x)\n'
        'tensor([1.        , 0.54030231], grad_fn=cos)\n'
        '>>> tf.grad([tf.cos(x).sum()], [x])[0]\n'
        'tensor([-0.        , -0.84147098])\n'
    ),
    'tenferro.tan': (
        '>>> x = tf.tensor([0.0, 0.5], requires_grad=True)\n'
        '>>> tf.tan(x)\n'
        'tensor([0.        , 0.54630249], grad_fn=tan)\n'
        '>>> tf.grad([tf.tan(x).sum()], [x])[0]\n'
        'tensor([1.        , 1.29844641])\n'
    ),
    'tenferro.tanh': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.tanh(x)\n'
        'tensor([0.        , 0.76159416], grad_fn=tanh)\n'
        '>>> tf.grad([tf.tanh(x).sum()], [x])[0]\n'
        'tensor([1.        , 0.41997434])\n'
    ),
    'tenferro.sinh': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.sinh(x)\n'
        'tensor([0.        , 1.17520119], grad_fn=sinh)\n'
        '>>> tf.grad([tf.sinh(x).sum()], [x])[0]\n'
        'tensor([1.        , 1.54308063])\n'
    ),
    'tenferro.cosh': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.cosh(x)\n'
        'tensor([1.        , 1.54308063], grad_fn=cosh)\n'
        '>>> tf.grad([tf.cosh(x).sum()], [x])[0]\n'
        'tensor([0.        , 1.17520119])\n'
    ),
    'tenferro.arcsin': (
        '>>> x = tf.tensor([0.0, 0.5], requires_grad=True)\n'
        '>>> tf.arcsin(x)\n'
        'tensor([0.        , 0.52359878], grad_fn=arcsin)\n'
        '>>> tf.grad([tf.arcsin(x).sum()], [x])[0]\n'
        'tensor([1.        , 1.15470054])\n'
    ),
    'tenferro.arccos': (
        '>>> x = tf.tensor([0.0, 0.5], requires_grad=True)\n'
        '>>> tf.arccos(x)\n'
        'tensor([1.57079633, 1.04719755], grad_fn=arccos)\n'
        '>>> tf.grad([tf.arccos(x).sum()], [x])[0]\n'
        'tensor([-1.        , -1.15470054])\n'
    ),
    'tenferro.arctan': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.arctan(x)\n'
        'tensor([0.        , 0.78539816], grad_fn=arctan)\n'
        '>>> tf.grad([tf.arctan(x).sum()], [x])[0]\n'
        'tensor([1. , 0.5])\n'
    ),
    'tenferro.arcsinh': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.arcsinh(x)\n'
        'tensor([0.        , 0.88137359], grad_fn=arcsinh)\n'
        '>>> tf.grad([tf.arcsinh(x).sum()], [x])[0]\n'
        'tensor([1.        , 0.70710678])\n'
    ),
    'tenferro.arccosh': (
        '>>> x = tf.tensor([2.0, 3.0], requires_grad=True)\n'
        '>>> tf.arccosh(x)\n'
        'tensor([1.3169579 , 1.76274717], grad_fn=arccosh)\n'
        '>>> tf.grad([tf.arccosh(x).sum()], [x])[0]\n'
        'tensor([0.57735027, 0.35355339])\n'
    ),
    'tenferro.arctanh': (
        '>>> x = tf.tensor([0.0, 0.5], requires_grad=True)\n'
        '>>> tf.arctanh(x)\n'
        'tensor([0.        , 0.54930614], grad_fn=arctanh)\n'
        '>>> tf.grad([tf.arctanh(x).sum()], [x])[0]\n'
        'tensor([1.        , 1.33333333])\n'
    ),
    'tenferro.square': (
        '>>> x = tf.tensor([1.0, 3.0], requires_grad=True)\n'
        '>>> tf.square(x)\n'
        'tensor([1., 9.], grad_fn=square)\n'
        '>>> tf.grad([tf.square(x).sum()], [x])[0]\n'
        'tensor([2., 6.])\n'
    ),
    'tenferro.reciprocal': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.reciprocal(x)\n'
        'tensor([1. , 0.5], grad_fn=reciprocal)\n'
        '>>> tf.grad([tf.reciprocal(x).sum()], [x])[0]\n'
        'tensor([-1.  , -0.25])\n'
    ),
    'tenferro.abs': (
        '>>> x = tf.tensor([-2.0, 3.0], requires_grad=True)\n'
        '>>> tf.abs(x)\n'
        'tensor([2., 3.], grad_fn=abs)\n'
        '>>> tf.grad([tf.abs(x).sum()], [x])[0]\n'
        'tensor([-1.,  1.])\n'
    ),
    'tenferro.negative': (
        '>>> x = tf.tensor([1.0, -2.0], requires_grad=True)\n'
        '>>> tf.negative(x)\n'
        'tensor([-1.,  2.], grad_fn=negative)\n'
        '>>> tf.grad([tf.negative(x).sum()], [x])[0]\n'
        'tensor([-1., -1.])\n'
    ),
    'tenferro.positive': (
        '>>> x = tf.tensor([1.0, -2.0], requires_grad=True)\n'
        '>>> tf.positive(x)\n'
        'tensor([ 1., -2.], grad_fn=positive)\n'
        '>>> tf.grad([tf.positive(x).sum()], [x])[0]\n'
        'tensor([1., 1.])\n'
    ),
    'tenferro.add': (
        '>>> a = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([3.0, 0.5], requires_grad=True)\n'
        '>>> tf.add(a, b)\n'
        'tensor([4. , 2.5], grad_fn=add)\n'
        '>>> tf.grad([tf.add(a, b).sum()], [a, b])\n'
        '[tensor([1., 1.]), tensor([1., 1.])]\n'
    ),
    'tenferro.subtract': (
        '>>> a = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([3.0, 0.5], requires_grad=True)\n'
        '>>> tf.subtract(a, b)\n'
        'tensor([-2. ,  1.5], grad_fn=subtract)\n'
        '>>> tf.grad([tf.subtract(a, b).sum()], [a, b])\n'
        '[tensor([1., 1.]), tensor([-1., -1.])]\n'
    ),
    'tenferro.multiply': (
        '>>> a = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([3.0, 0.5], requires_grad=True)\n'
        '>>> tf.multiply(a, b)\n'
        'tensor([3., 1.], grad_fn=multiply)\n'
        '>>> tf.grad([tf.multiply(a, b).sum()], [a, b])\n'
        '[tensor([3. , 0.5]), tensor([1., 2.])]\n'
    ),
    'tenferro.divide': (
        '>>> a = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([4.0, 0.5], requires_grad=True)\n'
        '>>> tf.divide(a, b)\n'
        'tensor([0.25, 4.  ], grad_fn=divide)\n'
        '>>> tf.grad([tf.divide(a, b).sum()], [a, b])\n'
        '[tensor([0.25, 2.  ]), tensor([-0.0625, -8.    ])]\n'
    ),
    'tenferro.power': (
        '>>> a = tf.tensor([2.0, 3.0], requires_grad=True)\n'
        '>>> b = tf.tensor([3.0, 0.5], requires_grad=True)\n'
        '>>> tf.power(a, b)\n'
        'tensor([8.        , 1.73205081], grad_fn=power)\n'
        '>>> tf.grad([tf.power(a, b).sum()], [a, b])\n'
        '[tensor([12.        ,  0.28867513]), tensor([5.54517744, 1.9028523 ])]\n'
    ),
    'tenferro.atan2': (
        '>>> a = tf.tensor([1.0, 0.0], requires_grad=True)\n'
        '>>> b = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.atan2(a, b)\n'
        'tensor([0.78539816, 0.        ], grad_fn=atan2)\n'
        '>>> tf.grad([tf.atan2(a, b).sum()], [a, b])\n'
        '[tensor([0.5, 0.5]), tensor([-0.5, -0. ])]\n'
    ),
    'tenferro.hypot': (
        '>>> a = tf.tensor([3.0, 5.0], requires_grad=True)\n'
        '>>> b = tf.tensor([4.0, 12.0], requires_grad=True)\n'
        '>>> tf.hypot(a, b)\n'
        'tensor([ 5., 13.], grad_fn=hypot)\n'
        '>>> tf.grad([tf.hypot(a, b).sum()], [a, b])\n'
        '[tensor([0.6       , 0.38461538]), tensor([0.8       , 0.92307692])]\n'
    ),
    'tenferro.logaddexp': (
        '>>> a = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> b = tf.tensor([0.0, -1.0], requires_grad=True)\n'
        '>>> tf.logaddexp(a, b)\n'
        'tensor([0.69314718, 1.12692801], grad_fn=logaddexp)\n'
        '>>> tf.grad([tf.logaddexp(a, b).sum()], [a, b])\n'
        '[tensor([0.5       , 0.88079708]), tensor([0.5       , 0.11920292])]\n'
    ),
    'tenferro.copysign': (
        '>>> a = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([-1.0, 1.0], requires_grad=True)\n'
        '>>> tf.copysign(a, b)\n'
        'tensor([-1.,  2.], grad_fn=copysign)\n'
        '>>> tf.grad([tf.copysign(a, b).sum()], [a, b])\n'
        '[tensor([-1.,  1.]), tensor([0., 0.])]\n'
    ),
    'tenferro.remainder': (
        '>>> a = tf.tensor([5.0, -5.0], requires_grad=True)\n'
        '>>> b = tf.tensor([3.0, 3.0], requires_grad=True)\n'
        '>>> tf.remainder(a, b)\n'
        'tensor([2., 1.], grad_fn=remainder)\n'
        '>>> tf.grad([tf.remainder(a, b).sum()], [a, b])\n'
        '[tensor([1., 1.]), tensor([-1.,  2.])]\n'
    ),
    'tenferro.maximum': (
        '>>> a = tf.tensor([1.0, 5.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([3.0, 0.5, 2.0], requires_grad=True)\n'
        '>>> tf.maximum(a, b)\n'
        'tensor([3., 5., 2.], grad_fn=maximum)\n'
        '>>> tf.grad([tf.maximum(a, b).sum()], [a, b])\n'
        '[tensor([0. , 1. , 0.5]), tensor([1. , 0. , 0.5])]\n'
    ),
    'tenferro.minimum': (
        '>>> a = tf.tensor([1.0, 5.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([3.0, 0.5, 2.0], requires_grad=True)\n'
        '>>> tf.minimum(a, b)\n'
        'tensor([1. , 0.5, 2. ], grad_fn=minimum)\n'
        '>>> tf.grad([tf.minimum(a, b).sum()], [a, b])\n'
        '[tensor([1. , 0. , 0.5]), tensor([0. , 1. , 0.5])]\n'
    ),
    'tenferro.equal': (
        '>>> tf.equal(tf.tensor([1, 2, 3]), 2)\n'
        'tensor([False,  True, False])\n'
    ),
    'tenferro.not_equal': (
        '>>> tf.not_equal(tf.tensor([1, 2, 3]), 2)\n'
        'tensor([ True, False,  True])\n'
    ),
    'tenferro.less': (
        '>>> tf.less(tf.tensor([1, 2, 3]), 2)\n'
        'tensor([ True, False, False])\n'
    ),
    'tenferro.less_equal': (
        '>>> tf.less_equal(tf.tensor([1, 2, 3]), 2)\n'
        'tensor([ True,  True, False])\n'
    ),
    'tenferro.greater': (
        '>>> tf.greater(tf.tensor([1, 2, 3]), 2)\n'
        'tensor([False, False,  True])\n'
    ),
    'tenferro.greater_equal': (
        '>>> tf.greater_equal(tf.tensor([1, 2, 3]), 2)\n'
        'tensor([False,  True,  True])\n'
    ),
    'tenferro.logical_and': (
        '>>> tf.logical_and(tf.tensor([True, False]), True)\n'
        'tensor([ True, False])\n'
    ),
    'tenferro.logical_or': (
        '>>> tf.logical_or(tf.tensor([True, False]), False)\n'
        'tensor([ True, False])\n'
    ),
    'tenferro.logical_xor': (
        '>>> tf.logical_xor(tf.tensor([True, False]), True)\n'
        'tensor([False,  True])\n'
    ),
    'tenferro.logical_not': (
        '>>> tf.logical_not(tf.tensor([True, False]))\n'
        'tensor([False,  True])\n'
    ),
    'tenferro.bitwise_and': (
        '>>> tf.bitwise_and(tf.tensor([12, 10]), 6)\n'
        'tensor([4, 2])\n'
    ),
    'tenferro.bitwise_or': (
        '>>> tf.bitwise_or(tf.tensor([12, 10]), 6)\n'
        'tensor([14, 14])\n'
    ),
    'tenferro.bitwise_xor': (
        '>>> tf.bitwise_xor(tf.tensor([12, 10]), 6)\n'
        'tensor([10, 12])\n'
    ),
    'tenferro.bitwise_invert': (
        '>>> tf.bitwise_invert(tf.tensor([0, 5]))\n'
        'tensor([-1, -6])\n'
    ),
    'tenferro.bitwise_left_shift': (
        '>>> tf.bitwise_left_shift(tf.tensor([1, 3]), 2)\n'
        'tensor([ 4, 12])\n'
    ),
    'tenferro.bitwise_right_shift': (
        '>>> tf.bitwise_right_shift(tf.tensor([8, -8]), 2)\n'
        'tensor([ 2, -2])\n'
    ),
    'tenferro.isnan': (
        '>>> tf.isnan(tf.tensor([1.0, np.nan, np.inf]))\n'
        'tensor([False,  True, False])\n'
    ),
    'tenferro.isinf': (
        '>>> tf.isinf(tf.tensor([1.0, np.nan, np.inf]))\n'
        'tensor([False, False,  True])\n'
    ),
    'tenferro.isfinite': (
        '>>> tf.isfinite(tf.tensor([1.0, np.nan, np.inf]))\n'
        'tensor([ True, False, False])\n'
    ),
    'tenferro.signbit': (
        '>>> tf.signbit(tf.tensor([-1.0, 0.0, -0.0]))\n'
        'tensor([ True, False,  True])\n'
    ),
    'tenferro.nextafter': (
        '>>> tf.nextafter(tf.tensor([1.0]), 2.0) - 1.0\n'
        'tensor([2.22044605e-16])\n'
    ),
    'tenferro.floor': (
        '>>> tf.floor(tf.tensor([-1.5, 0.5, 2.0]))\n'
        'tensor([-2.,  0.,  2.])\n'
    ),
    'tenferro.ceil': (
        '>>> tf.ceil(tf.tensor([-1.5, 0.5, 2.0]))\n'
        'tensor([-1.,  1.,  2.])\n'
    ),
    'tenferro.trunc': (
        '>>> tf.trunc(tf.tensor([-1.5, 0.5, 2.0]))\n'
        'tensor([-1.,  0.,  2.])\n'
    ),
    'tenferro.round': (
        '>>> x = tf.tensor([0.5, 1.5, 2.567], requires_grad=True)\n'
        '>>> tf.round(x)\n'
        'tensor([0., 2., 3.], grad_fn=round)\n'
        '>>> tf.round(x, decimals=1)\n'
        'tensor([0.5, 1.5, 2.6], grad_fn=round)\n'
        '>>> tf.grad([tf.round(x).sum()], [x])[0]\n'
        'tensor([0., 0., 0.])\n'
    ),
    'tenferro.floor_divide': (
        '>>> tf.floor_divide(tf.tensor([7.0, -7.0]), 2.0)\n'
        'tensor([ 3., -4.])\n'
    ),
    'tenferro.sign': (
        '>>> tf.sign(tf.tensor([-2.0, 0.0, 3.0]))\n'
        'tensor([-1.,  0.,  1.])\n'
        '>>> tf.sign(tf.tensor([3 + 4j]))\n'
        'tensor([0.6+0.8j], dtype=complex128)\n'
    ),
    'tenferro.conj': (
        '>>> tf.conj(tf.tensor([1 + 2j]))\n'
        'tensor([1.-2.j], dtype=complex128)\n'
    ),
    'tenferro.real': (
        '>>> tf.real(tf.tensor([1 + 2j]))\n'
        'tensor([1.])\n'
    ),
    'tenferro.imag': (
        '>>> tf.imag(tf.tensor([1 + 2j]))\n'
        'tensor([2.])\n'
    ),
    'tenferro.where': (
        '>>> x = tf.tensor([1.0, -2.0, 3.0], requires_grad=True)\n'
        '>>> y = tf.where(x > 0, x, 0.0)\n'
        '>>> y\n'
        'tensor([1., 0., 3.], grad_fn=where)\n'
        '>>> tf.grad([y.sum()], [x])[0]\n'
        'tensor([1., 0., 1.])\n'
    ),
    'tenferro.clip': (
        '>>> x = tf.tensor([-2.0, 0.5, 3.0], requires_grad=True)\n'
        '>>> tf.clip(x, -1.0, 1.0)\n'
        'tensor([-1. ,  0.5,  1. ], grad_fn=clip)\n'
        '>>> tf.grad([tf.clip(x, -1.0, 1.0).sum()], [x])[0]\n'
        'tensor([0., 1., 0.])\n'
    ),
    'tenferro.special.gammaln': (
        '>>> x = tf.tensor([0.5, 3.0], requires_grad=True)\n'
        '>>> tf.special.gammaln(x)\n'
        'tensor([0.57236494, 0.69314718], grad_fn=special.gammaln)\n'
        '>>> tf.grad([tf.special.gammaln(x).sum()], [x])[0]\n'
        'tensor([-1.96351003,  0.92278434])\n'
    ),
    'tenferro.special.gamma': (
        '>>> x = tf.tensor([0.5, 3.0], requires_grad=True)\n'
        '>>> tf.special.gamma(x)\n'
        'tensor([1.77245385, 2.        ], grad_fn=special.gamma)\n'
        '>>> tf.grad([tf.special.gamma(x).sum()], [x])[0]\n'
        'tensor([-3.48023091,  1.84556867])\n'
    ),
    'tenferro.special.loggamma': (
        '>>> x = tf.tensor([0.5, 3.0], requires_grad=True)\n'
        '>>> tf.special.loggamma(x)\n'
        'tensor([0.57236494, 0.69314718], grad_fn=special.loggamma)\n'
        '>>> tf.grad([tf.special.loggamma(x).sum()], [x])[0]\n'
        'tensor([-1.96351003,  0.92278434])\n'
    ),
    'tenferro.special.digamma': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.digamma(x)\n'
        'tensor([-0.57721566,  0.42278434], grad_fn=special.digamma)\n'
        '>>> tf.grad([tf.special.digamma(x).sum()], [x])[0]\n'
        'tensor([1.64493407, 0.64493407])\n'
    ),
    'tenferro.special.rgamma': (
        '>>> x = tf.tensor([0.5, 3.0], requires_grad=True)\n'
        '>>> tf.special.rgamma(x)\n'
        'tensor([0.56418958, 0.5       ], grad_fn=special.rgamma)\n'
        '>>> tf.grad([tf.special.rgamma(x).sum()], [x])[0]\n'
        'tensor([ 1.1077919 , -0.46139217])\n'
    ),
    'tenferro.special.erf': (
        '>>> x = tf.tensor([0.0, 0.5], requires_grad=True)\n'
        '>>> tf.special.erf(x)\n'
        'tensor([0.        , 0.52049988], grad_fn=special.erf)\n'
        '>>> tf.grad([tf.special.erf(x).sum()], [x])[0]\n'
        'tensor([1.12837917, 0.87878258])\n'
    ),
    'tenferro.special.erfc': (
        '>>> x = tf.tensor([0.0, 0.5], requires_grad=True)\n'
        '>>> tf.special.erfc(x)\n'
        'tensor([1.        , 0.47950012], grad_fn=special.erfc)\n'
        '>>> tf.grad([tf.special.erfc(x).sum()], [x])[0]\n'
        'tensor([-1.12837917, -0.87878258])\n'
    ),
    'tenferro.special.erfcx': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.erfcx(x)\n'
        'tensor([1.        , 0.42758358], grad_fn=special.erfcx)\n'
        '>>> tf.grad([tf.special.erfcx(x).sum()], [x])[0]\n'
        'tensor([-1.12837917, -0.27321201])\n'
    ),
    'tenferro.special.erfinv': (
        '>>> x = tf.tensor([0.0, 0.5], requires_grad=True)\n'
        '>>> tf.special.erfinv(x)\n'
        'tensor([0.        , 0.47693628], grad_fn=special.erfinv)\n'
        '>>> tf.grad([tf.special.erfinv(x).sum()], [x])[0]\n'
        'tensor([0.88622693, 1.11258482])\n'
    ),
    'tenferro.special.erfcinv': (
        '>>> x = tf.tensor([1.0, 0.5], requires_grad=True)\n'
        '>>> tf.special.erfcinv(x)\n'
        'tensor([-0.        ,  0.47693628], grad_fn=special.erfcinv)\n'
        '>>> tf.grad([tf.special.erfcinv(x).sum()], [x])[0]\n'
        'tensor([-0.88622693, -1.11258482])\n'
    ),
    'tenferro.special.ndtr': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.ndtr(x)\n'
        'tensor([0.5       , 0.84134475], grad_fn=special.ndtr)\n'
        '>>> tf.grad([tf.special.ndtr(x).sum()], [x])[0]\n'
        'tensor([0.39894228, 0.24197072])\n'
    ),
    'tenferro.special.ndtri': (
        '>>> x = tf.tensor([0.5, 0.975], requires_grad=True)\n'
        '>>> tf.special.ndtri(x)\n'
        'tensor([0.        , 1.95996398], grad_fn=special.ndtri)\n'
        '>>> tf.grad([tf.special.ndtri(x).sum()], [x])[0]\n'
        'tensor([ 2.50662827, 17.11008308])\n'
    ),
    'tenferro.special.log_ndtr': (
        '>>> x = tf.tensor([0.0, -3.0], requires_grad=True)\n'
        '>>> tf.special.log_ndtr(x)\n'
        'tensor([-0.69314718, -6.60772622], grad_fn=special.log_ndtr)\n'
        '>>> tf.grad([tf.special.log_ndtr(x).sum()], [x])[0]\n'
        'tensor([0.79788456, 3.28309865])\n'
    ),
    'tenferro.special.expit': (
        '>>> x = tf.tensor([0.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.expit(x)\n'
        'tensor([0.5       , 0.88079708], grad_fn=special.expit)\n'
        '>>> tf.grad([tf.special.expit(x).sum()], [x])[0]\n'
        'tensor([0.25      , 0.10499359])\n'
    ),
    'tenferro.special.logit': (
        '>>> x = tf.tensor([0.5, 0.9], requires_grad=True)\n'
        '>>> tf.special.logit(x)\n'
        'tensor([0.        , 2.19722458], grad_fn=special.logit)\n'
        '>>> tf.grad([tf.special.logit(x).sum()], [x])[0]\n'
        'tensor([ 4.        , 11.11111111])\n'
    ),
    'tenferro.special.log_expit': (
        '>>> x = tf.tensor([0.0, -2.0], requires_grad=True)\n'
        '>>> tf.special.log_expit(x)\n'
        'tensor([-0.69314718, -2.12692801], grad_fn=special.log_expit)\n'
        '>>> tf.grad([tf.special.log_expit(x).sum()], [x])[0]\n'
        'tensor([0.5       , 0.88079708])\n'
    ),
    'tenferro.special.entr': (
        '>>> x = tf.tensor([0.5, 1.0], requires_grad=True)\n'
        '>>> tf.special.entr(x)\n'
        'tensor([ 0.34657359, -0.        ], grad_fn=special.entr)\n'
        '>>> tf.grad([tf.special.entr(x).sum()], [x])[0]\n'
        'tensor([-0.30685282, -1.        ])\n'
    ),
    'tenferro.special.i0': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.i0(x)\n'
        'tensor([1.        , 1.26606588], grad_fn=special.i0)\n'
        '>>> tf.grad([tf.special.i0(x).sum()], [x])[0]\n'
        'tensor([0.       , 0.5651591])\n'
    ),
    'tenferro.special.i0e': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.i0e(x)\n'
        'tensor([1.        , 0.46575961], grad_fn=special.i0e)\n'
        '>>> tf.grad([tf.special.i0e(x).sum()], [x])[0]\n'
        'tensor([ 0.        , -0.25784919])\n'
    ),
    'tenferro.special.i1': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.i1(x)\n'
        'tensor([0.       , 0.5651591], grad_fn=special.i1)\n'
        '>>> tf.grad([tf.special.i1(x).sum()], [x])[0]\n'
        'tensor([0.5       , 0.70090677])\n'
    ),
    'tenferro.special.i1e': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.i1e(x)\n'
        'tensor([0.        , 0.20791042], grad_fn=special.i1e)\n'
        '>>> tf.grad([tf.special.i1e(x).sum()], [x])[0]\n'
        'tensor([0.5       , 0.04993878])\n'
    ),
    'tenferro.special.j0': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.j0(x)\n'
        'tensor([1.        , 0.76519769], grad_fn=special.j0)\n'
        '>>> tf.grad([tf.special.j0(x).sum()], [x])[0]\n'
        'tensor([-0.        , -0.44005059])\n'
    ),
    'tenferro.special.j1': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.j1(x)\n'
        'tensor([0.        , 0.44005059], grad_fn=special.j1)\n'
        '>>> tf.grad([tf.special.j1(x).sum()], [x])[0]\n'
        'tensor([0.5      , 0.3251471])\n'
    ),
    'tenferro.special.y0': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.y0(x)\n'
        'tensor([0.08825696, 0.51037567], grad_fn=special.y0)\n'
        '>>> tf.grad([tf.special.y0(x).sum()], [x])[0]\n'
        'tensor([0.78121282, 0.10703243])\n'
    ),
    'tenferro.special.y1': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.y1(x)\n'
        'tensor([-0.78121282, -0.10703243], grad_fn=special.y1)\n'
        '>>> tf.grad([tf.special.y1(x).sum()], [x])[0]\n'
        'tensor([0.86946979, 0.56389189])\n'
    ),
    'tenferro.special.k0': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.k0(x)\n'
        'tensor([0.42102444, 0.11389387], grad_fn=special.k0)\n'
        '>>> tf.grad([tf.special.k0(x).sum()], [x])[0]\n'
        'tensor([-0.60190723, -0.13986588])\n'
    ),
    'tenferro.special.k1': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.k1(x)\n'
        'tensor([0.60190723, 0.13986588], grad_fn=special.k1)\n'
        '>>> tf.grad([tf.special.k1(x).sum()], [x])[0]\n'
        'tensor([-1.02293167, -0.18382681])\n'
    ),
    'tenferro.special.k0e': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.k0e(x)\n'
        'tensor([1.14446308, 0.84156822], grad_fn=special.k0e)\n'
        '>>> tf.grad([tf.special.k0e(x).sum()], [x])[0]\n'
        'tensor([-0.49169041, -0.19190863])\n'
    ),
    'tenferro.special.k1e': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.k1e(x)\n'
        'tensor([1.63615349, 1.03347685], grad_fn=special.k1e)\n'
        '>>> tf.grad([tf.special.k1e(x).sum()], [x])[0]\n'
        'tensor([-1.14446308, -0.32482979])\n'
    ),
    'tenferro.special.gammasgn': (
        '>>> x = tf.tensor([-0.5, 2.0], requires_grad=True)\n'
        '>>> tf.special.gammasgn(x)\n'
        'tensor([-1.,  1.], grad_fn=special.gammasgn)\n'
        '>>> tf.grad([tf.special.gammasgn(x).sum()], [x])[0]\n'
        'tensor([0., 0.])\n'
    ),
    'tenferro.special.sinc': (
        '>>> x = tf.tensor([0.0, 0.5], requires_grad=True)\n'
        '>>> tf.special.sinc(x)\n'
        'tensor([1.        , 0.63661977], grad_fn=special.sinc)\n'
        '>>> tf.grad([tf.special.sinc(x).sum()], [x])[0]\n'
        'tensor([-0.        , -1.27323954])\n'
    ),
    'tenferro.special.cbrt': (
        '>>> x = tf.tensor([8.0, 27.0], requires_grad=True)\n'
        '>>> tf.special.cbrt(x)\n'
        'tensor([2., 3.], grad_fn=special.cbrt)\n'
        '>>> tf.grad([tf.special.cbrt(x).sum()], [x])[0]\n'
        'tensor([0.08333333, 0.03703704])\n'
    ),
    'tenferro.special.exp2': (
        '>>> x = tf.tensor([0.0, 3.0], requires_grad=True)\n'
        '>>> tf.special.exp2(x)\n'
        'tensor([1., 8.], grad_fn=special.exp2)\n'
        '>>> tf.grad([tf.special.exp2(x).sum()], [x])[0]\n'
        'tensor([0.69314718, 5.54517744])\n'
    ),
    'tenferro.special.exp10': (
        '>>> x = tf.tensor([0.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.exp10(x)\n'
        'tensor([  1., 100.], grad_fn=special.exp10)\n'
        '>>> tf.grad([tf.special.exp10(x).sum()], [x])[0]\n'
        'tensor([  2.30258509, 230.2585093 ])\n'
    ),
    'tenferro.special.cosm1': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.cosm1(x)\n'
        'tensor([ 0.        , -0.45969769], grad_fn=special.cosm1)\n'
        '>>> tf.grad([tf.special.cosm1(x).sum()], [x])[0]\n'
        'tensor([-0.        , -0.84147098])\n'
    ),
    'tenferro.special.exprel': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.exprel(x)\n'
        'tensor([1.        , 1.71828183], grad_fn=special.exprel)\n'
        '>>> tf.grad([tf.special.exprel(x).sum()], [x])[0]\n'
        'tensor([0.5, 1. ])\n'
    ),
    'tenferro.special.sindg': (
        '>>> x = tf.tensor([0.0, 90.0], requires_grad=True)\n'
        '>>> tf.special.sindg(x)\n'
        'tensor([0., 1.], grad_fn=special.sindg)\n'
        '>>> tf.grad([tf.special.sindg(x).sum()], [x])[0]\n'
        'tensor([ 0.01745329, -0.        ])\n'
    ),
    'tenferro.special.cosdg': (
        '>>> x = tf.tensor([0.0, 90.0], requires_grad=True)\n'
        '>>> tf.special.cosdg(x)\n'
        'tensor([ 1., -0.], grad_fn=special.cosdg)\n'
        '>>> tf.grad([tf.special.cosdg(x).sum()], [x])[0]\n'
        'tensor([-0.        , -0.01745329])\n'
    ),
    'tenferro.special.tandg': (
        '>>> x = tf.tensor([0.0, 45.0], requires_grad=True)\n'
        '>>> tf.special.tandg(x)\n'
        'tensor([0., 1.], grad_fn=special.tandg)\n'
        '>>> tf.grad([tf.special.tandg(x).sum()], [x])[0]\n'
        'tensor([0.01745329, 0.03490659])\n'
    ),
    'tenferro.special.cotdg': (
        '>>> x = tf.tensor([45.0, 90.0], requires_grad=True)\n'
        '>>> tf.special.cotdg(x)\n'
        'tensor([1., 0.], grad_fn=special.cotdg)\n'
        '>>> tf.grad([tf.special.cotdg(x).sum()], [x])[0]\n'
        'tensor([-0.03490659, -0.01745329])\n'
    ),
    'tenferro.special.spence': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.spence(x)\n'
        'tensor([ 0.        , -0.82246703], grad_fn=special.spence)\n'
        '>>> tf.grad([tf.special.spence(x).sum()], [x])[0]\n'
        'tensor([-1.        , -0.69314718])\n'
    ),
    'tenferro.special.exp1': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.exp1(x)\n'
        'tensor([0.21938393, 0.04890051], grad_fn=special.exp1)\n'
        '>>> tf.grad([tf.special.exp1(x).sum()], [x])[0]\n'
        'tensor([-0.36787944, -0.06766764])\n'
    ),
    'tenferro.special.expi': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.expi(x)\n'
        'tensor([1.89511782, 4.95423436], grad_fn=special.expi)\n'
        '>>> tf.grad([tf.special.expi(x).sum()], [x])[0]\n'
        'tensor([2.71828183, 3.69452805])\n'
    ),
    'tenferro.special.softplus': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.softplus(x)\n'
        'tensor([0.69314718, 1.31326169], grad_fn=...)\n'
        '>>> tf.grad([tf.special.softplus(x).sum()], [x])[0]\n'
        'tensor([0.5       , 0.73105858])\n'
    ),
    'tenferro.special.betaln': (
        '>>> a = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([2.0, 3.0], requires_grad=True)\n'
        '>>> tf.special.betaln(a, b)\n'
        'tensor([-0.69314718, -2.48490665], grad_fn=special.betaln)\n'
        '>>> tf.grad([tf.special.betaln(a, b).sum()], [a, b])\n'
        '[tensor([-1.5       , -1.08333333]), tensor([-0.5       , -0.58333333])]\n'
    ),
    'tenferro.special.beta': (
        '>>> a = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([2.0, 3.0], requires_grad=True)\n'
        '>>> tf.special.beta(a, b)\n'
        'tensor([0.5       , 0.08333333], grad_fn=special.beta)\n'
        '>>> tf.grad([tf.special.beta(a, b).sum()], [a, b])\n'
        '[tensor([-0.75      , -0.09027778]), tensor([-0.25      , -0.04861111])]\n'
    ),
    'tenferro.special.poch': (
        '>>> a = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([2.0, 3.0], requires_grad=True)\n'
        '>>> tf.special.poch(a, b)\n'
        'tensor([ 2., 24.], grad_fn=special.poch)\n'
        '>>> tf.grad([tf.special.poch(a, b).sum()], [a, b])\n'
        '[tensor([ 3., 26.]), tensor([ 1.84556867, 36.14682404])]\n'
    ),
    'tenferro.special.xlogy': (
        '>>> a = tf.tensor([0.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([1.0, 3.0], requires_grad=True)\n'
        '>>> tf.special.xlogy(a, b)\n'
        'tensor([0.        , 2.19722458], grad_fn=special.xlogy)\n'
        '>>> tf.grad([tf.special.xlogy(a, b).sum()], [a, b])\n'
        '[tensor([0.        , 1.09861229]), tensor([0.        , 0.66666667])]\n'
    ),
    'tenferro.special.xlog1py': (
        '>>> a = tf.tensor([0.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([1.0, 3.0], requires_grad=True)\n'
        '>>> tf.special.xlog1py(a, b)\n'
        'tensor([0.        , 2.77258872], grad_fn=special.xlog1py)\n'
        '>>> tf.grad([tf.special.xlog1py(a, b).sum()], [a, b])\n'
        '[tensor([0.69314718, 1.38629436]), tensor([0. , 0.5])]\n'
    ),
    'tenferro.special.rel_entr': (
        '>>> a = tf.tensor([0.5, 1.0], requires_grad=True)\n'
        '>>> b = tf.tensor([1.0, 0.5], requires_grad=True)\n'
        '>>> tf.special.rel_entr(a, b)\n'
        'tensor([-0.34657359,  0.69314718], grad_fn=special.rel_entr)\n'
        '>>> tf.grad([tf.special.rel_entr(a, b).sum()], [a, b])\n'
        '[tensor([0.30685282, 1.69314718]), tensor([-0.5, -2. ])]\n'
    ),
    'tenferro.special.kl_div': (
        '>>> a = tf.tensor([0.5, 1.0], requires_grad=True)\n'
        '>>> b = tf.tensor([1.0, 0.5], requires_grad=True)\n'
        '>>> tf.special.kl_div(a, b)\n'
        'tensor([0.15342641, 0.19314718], grad_fn=special.kl_div)\n'
        '>>> tf.grad([tf.special.kl_div(a, b).sum()], [a, b])\n'
        '[tensor([-0.69314718,  0.69314718]), tensor([ 0.5, -1. ])]\n'
    ),
    'tenferro.special.huber': (
        '>>> a = tf.tensor([1.0, 1.0], requires_grad=True)\n'
        '>>> b = tf.tensor([0.5, 3.0], requires_grad=True)\n'
        '>>> tf.special.huber(a, b)\n'
        'tensor([0.125, 2.5  ], grad_fn=special.huber)\n'
        '>>> tf.grad([tf.special.huber(a, b).sum()], [a, b])\n'
        '[tensor([0., 2.]), tensor([0.5, 1. ])]\n'
    ),
    'tenferro.special.pseudo_huber': (
        '>>> a = tf.tensor([1.0, 1.0], requires_grad=True)\n'
        '>>> b = tf.tensor([0.5, 3.0], requires_grad=True)\n'
        '>>> tf.special.pseudo_huber(a, b)\n'
        'tensor([0.11803399, 2.16227766], grad_fn=special.pseudo_huber)\n'
        '>>> tf.grad([tf.special.pseudo_huber(a, b).sum()], [a, b])\n'
        '[tensor([0.01246118, 1.47850543]), tensor([0.4472136, 0.9486833])]\n'
    ),
    'tenferro.special.gammainc': (
        '>>> a = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([1.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.gammainc(a, b)\n'
        'tensor([0.63212056, 0.26424112], grad_fn=special.gammainc)\n'
        '>>> tf.grad([tf.special.gammainc(a, b).sum()], [a, b])\n'
        '[tensor([-0.43172971, -0.27619605]), tensor([0.36787944, 0.36787944])]\n'
    ),
    'tenferro.special.gammaincc': (
        '>>> a = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([1.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.gammaincc(a, b)\n'
        'tensor([0.36787944, 0.73575888], grad_fn=special.gammaincc)\n'
        '>>> tf.grad([tf.special.gammaincc(a, b).sum()], [a, b])\n'
        '[tensor([0.43172971, 0.27619605]), tensor([-0.36787944, -0.36787944])]\n'
    ),
    'tenferro.special.stdtr': (
        '>>> a = tf.tensor([1.0, 10.0], requires_grad=True)\n'
        '>>> b = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.special.stdtr(a, b)\n'
        'tensor([0.5       , 0.82955343], grad_fn=special.stdtr)\n'
        '>>> tf.grad([tf.special.stdtr(a, b).sum()], [a, b])\n'
        '[tensor([0.        , 0.00114798]), tensor([0.31830989, 0.23036199])]\n'
    ),
    'tenferro.special.boxcox': (
        '>>> a = tf.tensor([1.0, 4.0], requires_grad=True)\n'
        '>>> b = tf.tensor([0.5, 0.5], requires_grad=True)\n'
        '>>> tf.special.boxcox(a, b)\n'
        'tensor([0., 2.], grad_fn=special.boxcox)\n'
        '>>> tf.grad([tf.special.boxcox(a, b).sum()], [a, b])\n'
        '[tensor([1. , 0.5]), tensor([0.        , 1.54517744])]\n'
    ),
    'tenferro.special.boxcox1p': (
        '>>> a = tf.tensor([0.0, 3.0], requires_grad=True)\n'
        '>>> b = tf.tensor([0.5, 0.5], requires_grad=True)\n'
        '>>> tf.special.boxcox1p(a, b)\n'
        'tensor([0., 2.], grad_fn=special.boxcox1p)\n'
        '>>> tf.grad([tf.special.boxcox1p(a, b).sum()], [a, b])\n'
        '[tensor([1. , 0.5]), tensor([0.        , 1.54517744])]\n'
    ),
    'tenferro.special.inv_boxcox': (
        '>>> a = tf.tensor([0.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([0.5, 0.5], requires_grad=True)\n'
        '>>> tf.special.inv_boxcox(a, b)\n'
        'tensor([1., 4.], grad_fn=special.inv_boxcox)\n'
        '>>> tf.grad([tf.special.inv_boxcox(a, b).sum()], [a, b])\n'
        '[tensor([1., 2.]), tensor([-0.        , -3.09035489])]\n'
    ),
    'tenferro.special.inv_boxcox1p': (
        '>>> a = tf.tensor([0.0, 2.0], requires_grad=True)\n'
        '>>> b = tf.tensor([0.5, 0.5], requires_grad=True)\n'
        '>>> tf.special.inv_boxcox1p(a, b)\n'
        'tensor([0., 3.], grad_fn=special.inv_boxcox1p)\n'
        '>>> tf.grad([tf.special.inv_boxcox1p(a, b).sum()], [a, b])\n'
        '[tensor([1., 2.]), tensor([-0.        , -3.09035489])]\n'
    ),
    'tenferro.special.jv': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.jv([0.0, 1.5], x)\n'
        'tensor([0.76519769, 0.49129378], grad_fn=special.jv)\n'
        '>>> tf.grad([tf.special.jv([0.0, 1.5], x).sum()], [x])[0]\n'
        'tensor([-0.44005059,  0.1445458 ])\n'
    ),
    'tenferro.special.yv': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.yv([0.0, 1.5], x)\n'
        'tensor([ 0.08825696, -0.39562328], grad_fn=special.yv)\n'
        '>>> tf.grad([tf.special.yv([0.0, 1.5], x).sum()], [x])[0]\n'
        'tensor([0.78121282, 0.53150317])\n'
    ),
    'tenferro.special.yn': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.yn([0, 1], x)\n'
        'tensor([ 0.08825696, -0.10703243], grad_fn=special.yn)\n'
        '>>> tf.grad([tf.special.yn([0, 1], x).sum()], [x])[0]\n'
        'tensor([0.78121282, 0.56389189])\n'
    ),
    'tenferro.special.iv': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.iv([0.0, 1.5], x)\n'
        'tensor([1.26606588, 1.09947319], grad_fn=special.iv)\n'
        '>>> tf.grad([tf.special.iv([0.0, 1.5], x).sum()], [x])[0]\n'
        'tensor([0.5651591 , 1.22163197])\n'
    ),
    'tenferro.special.ive': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.ive([0.0, 1.5], x)\n'
        'tensor([0.46575961, 0.14879752], grad_fn=special.ive)\n'
        '>>> tf.grad([tf.special.ive([0.0, 1.5], x).sum()], [x])[0]\n'
        'tensor([-0.25784919,  0.01653239])\n'
    ),
    'tenferro.special.kv': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.kv([0.0, 1.5], x)\n'
        'tensor([0.42102444, 0.17990666], grad_fn=special.kv)\n'
        '>>> tf.grad([tf.special.kv([0.0, 1.5], x).sum()], [x])[0]\n'
        'tensor([-0.60190723, -0.25486777])\n'
    ),
    'tenferro.special.kn': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.kn([0, 1], x)\n'
        'tensor([0.42102444, 0.13986588], grad_fn=special.kn)\n'
        '>>> tf.grad([tf.special.kn([0, 1], x).sum()], [x])[0]\n'
        'tensor([-0.60190723, -0.18382681])\n'
    ),
    'tenferro.special.kve': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.kve([0.0, 1.5], x)\n'
        'tensor([1.14446308, 1.32934039], grad_fn=special.kve)\n'
        '>>> tf.grad([tf.special.kve([0.0, 1.5], x).sum()], [x])[0]\n'
        'tensor([-0.49169041, -0.55389183])\n'
    ),
    'tenferro.special.polygamma': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.polygamma([0, 1], x)\n'
        'tensor([-0.57721566,  0.64493407], grad_fn=special.polygamma)\n'
        '>>> tf.grad([tf.special.polygamma([0, 1], x).sum()], [x])[0]\n'
        'tensor([ 1.64493407, -0.40411381])\n'
    ),
    'tenferro.special.expn': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.expn([1, 2], x)\n'
        'tensor([0.21938393, 0.03753426], grad_fn=special.expn)\n'
        '>>> tf.grad([tf.special.expn([1, 2], x).sum()], [x])[0]\n'
        'tensor([-0.36787944, -0.04890051])\n'
    ),
    'tenferro.special.spherical_jn': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.spherical_jn([0, 1], x)\n'
        'tensor([0.84147098, 0.43539777], grad_fn=special.spherical_jn)\n'
        '>>> tf.grad([tf.special.spherical_jn([0, 1], x).sum()], [x])[0]\n'
        'tensor([-0.30116868,  0.01925094])\n'
    ),
    'tenferro.special.spherical_yn': (
        '>>> x = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.spherical_yn([0, 1], x)\n'
        'tensor([-0.54030231, -0.350612  ], grad_fn=special.spherical_yn)\n'
        '>>> tf.grad([tf.special.spherical_yn([0, 1], x).sum()], [x])[0]\n'
        'tensor([1.38177329, 0.55868542])\n'
    ),
    'tenferro.special.zeta': (
        '>>> q = tf.tensor([1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.zeta(2.0, q)\n'
        'tensor([1.64493407, 0.64493407], grad_fn=special.zeta)\n'
        '>>> tf.grad([tf.special.zeta(2.0, q).sum()], [q])[0]\n'
        'tensor([-2.40411381, -0.40411381])\n'
    ),
    'tenferro.special.multigammaln': (
        '>>> a = tf.tensor([2.0, 3.0], requires_grad=True)\n'
        '>>> tf.special.multigammaln(a, 2)\n'
        'tensor([0.45158271, 1.55019499], grad_fn=...)\n'
        '>>> tf.grad([tf.special.multigammaln(a, 2).sum()], [a])[0]\n'
        'tensor([0.45927431, 1.62594098])\n'
    ),
    'tenferro.special.betainc': (
        '>>> x = tf.tensor([0.25, 0.5], requires_grad=True)\n'
        '>>> tf.special.betainc(2.0, 3.0, x)\n'
        'tensor([0.26171875, 0.6875    ], grad_fn=special.betainc)\n'
        '>>> tf.grad([tf.special.betainc(2.0, 3.0, x).sum()], [x])[0]\n'
        'tensor([1.6875, 1.5   ])\n'
    ),
    'tenferro.special.betaincc': (
        '>>> x = tf.tensor([0.25, 0.5], requires_grad=True)\n'
        '>>> tf.special.betaincc(2.0, 3.0, x)\n'
        'tensor([0.73828125, 0.3125    ], grad_fn=special.betaincc)\n'
        '>>> tf.grad([tf.special.betaincc(2.0, 3.0, x).sum()], [x])[0]\n'
        'tensor([-1.6875, -1.5   ])\n'
    ),
    'tenferro.special.radian': (
        '>>> tf.special.radian(180.0, 0.0, 0.0)\n'
        'tensor(3.14159265)\n'
    ),
    'tenferro.special.logsumexp': (
        '>>> a = tf.tensor([0.0, 1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.logsumexp(a)\n'
        'tensor(2.40760596, grad_fn=logsumexp)\n'
        '>>> tf.grad([tf.special.logsumexp(a)], [a])[0]  # softmax(a)\n'
        'tensor([0.09003057, 0.24472847, 0.66524096])\n'
    ),
    'tenferro.special.softmax': (
        '>>> x = tf.tensor([0.0, 1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.softmax(x)\n'
        'tensor([0.09003057, 0.24472847, 0.66524096], grad_fn=...)\n'
        '>>> tf.grad([tf.special.softmax(x)[2]], [x])[0]\n'
        'tensor([-0.05989202, -0.1628034 ,  0.22269543])\n'
    ),
    'tenferro.special.log_softmax': (
        '>>> x = tf.tensor([0.0, 1.0, 2.0], requires_grad=True)\n'
        '>>> tf.special.log_softmax(x)\n'
        'tensor([-2.40760596, -1.40760596, -0.40760596], grad_fn=...)\n'
        '>>> tf.grad([tf.special.log_softmax(x)[2]], [x])[0]\n'
        'tensor([-0.09003057, -0.24472847,  0.33475904])\n'
    ),
    'tenferro.stats.norm': (
        '>>> x = tf.tensor([0.0, 1.0], requires_grad=True)\n'
        '>>> tf.stats.norm.logpdf(x)\n'
        'tensor([-0.91893853, -1.41893853], grad_fn=...)\n'
        '>>> tf.grad([tf.stats.norm.logpdf(x).sum()], [x])[0]  # -x\n'
        'tensor([-0., -1.])\n'
        '>>> tf.stats.norm(1.0, 2.0).cdf(1.0)\n'
        'tensor(0.5)\n'
    ),
    'tenferro.stats.t': (
        '>>> tf.stats.t.cdf(0.0, 3.0)\n'
        'tensor(0.5)\n'
        '>>> tf.stats.t.logpdf(tf.tensor([0.0, 1.0]), 3.0)\n'
        'tensor([-1.00088885, -1.57625299])\n'
    ),
    'tenferro.stats.gamma': (
        '>>> a = tf.tensor(2.0, requires_grad=True)\n'
        '>>> tf.stats.gamma.logpdf(1.0, a)\n'
        'tensor(-1., grad_fn=...)\n'
        '>>> tf.grad([tf.stats.gamma.logpdf(1.0, a)], [a])[0]  # -digamma(2)\n'
        'tensor(-0.42278434)\n'
    ),
    'tenferro.stats.beta': (
        '>>> a = tf.tensor(2.0, requires_grad=True)\n'
        '>>> tf.stats.beta.pdf(0.5, a, 2.0)\n'
        'tensor(1.5, grad_fn=...)\n'
        '>>> tf.grad([tf.stats.beta.cdf(0.5, a, 2.0)], [a])[0]\n'
        'tensor(-0.22157359)\n'
    ),
    'tenferro.stats.poisson': (
        '>>> mu = tf.tensor(2.0, requires_grad=True)\n'
        '>>> tf.stats.poisson.logpmf(3, mu)\n'
        'tensor(-1.71231793, grad_fn=...)\n'
        '>>> tf.grad([tf.stats.poisson.logpmf(3, mu)], [mu])[0]  # 3/mu - 1\n'
        'tensor(0.5)\n'
    ),
    'tenferro.stats.expon': (
        '>>> tf.stats.expon.logpdf(tf.tensor([0.0, 1.0]), scale=2.0)\n'
        'tensor([-0.69314718, -1.19314718])\n'
    ),
    'tenferro.stats.laplace': (
        '>>> tf.stats.laplace.logpdf(tf.tensor([0.0, 1.0]))\n'
        'tensor([-0.69314718, -1.69314718])\n'
    ),
    'tenferro.stats.cauchy': (
        '>>> tf.stats.cauchy.cdf(tf.tensor([0.0, 1.0]))\n'
        'tensor([0.5 , 0.75])\n'
    ),
    'tenferro.stats.logistic': (
        '>>> tf.stats.logistic.cdf(tf.tensor([0.0, 1.0]))\n'
        'tensor([0.5       , 0.73105858])\n'
    ),
    'tenferro.stats.lognorm': (
        '>>> tf.stats.lognorm.pdf(1.0, 0.5)\n'
        'tensor(0.79788456)\n'
    ),
    'tenferro.stats.uniform': (
        '>>> tf.stats.uniform.cdf(tf.tensor([0.25, 2.0]), 0.0, 1.0)\n'
        'tensor([0.25, 1.  ])\n'
    ),
    'tenferro.stats.chi2': (
        '>>> tf.stats.chi2.cdf(2.0, 2.0)\n'
        'tensor(0.63212056)\n'
    ),
    'tenferro.stats.chi': (
        '>>> tf.stats.chi.pdf(1.0, 3.0)\n'
        'tensor(0.48394145)\n'
    ),
    'tenferro.stats.f': (
        '>>> tf.stats.f.cdf(1.0, 5.0, 10.0)\n'
        'tensor(0.53488057)\n'
    ),
    'tenferro.stats.rayleigh': (
        '>>> tf.stats.rayleigh.cdf(1.0)\n'
        'tensor(0.39346934)\n'
    ),
    'tenferro.stats.weibull_min': (
        '>>> tf.stats.weibull_min.cdf(1.0, 2.0)\n'
        'tensor(0.63212056)\n'
    ),
    'tenferro.stats.pareto': (
        '>>> tf.stats.pareto.cdf(2.0, 3.0)\n'
        'tensor(0.875)\n'
    ),
    'tenferro.stats.vonmises': (
        '>>> tf.stats.vonmises.logpdf(0.0, 2.0)\n'
        'tensor(-0.66187061)\n'
    ),
    'tenferro.stats.binom': (
        '>>> tf.stats.binom.pmf(tf.tensor([0, 1, 2]), 2, 0.5)\n'
        'tensor([0.25, 0.5 , 0.25])\n'
    ),
    'tenferro.stats.bernoulli': (
        '>>> p = tf.tensor(0.3, requires_grad=True)\n'
        '>>> tf.stats.bernoulli.entropy(p)\n'
        'tensor(0.6108643, grad_fn=...)\n'
        '>>> tf.grad([tf.stats.bernoulli.logpmf(1, p)], [p])[0]  # 1/p\n'
        'tensor(3.33333333)\n'
    ),
    'tenferro.stats.geom': (
        '>>> tf.stats.geom.pmf(tf.tensor([1, 2, 3]), 0.5)\n'
        'tensor([0.5  , 0.25 , 0.125])\n'
    ),
    'tenferro.stats.nbinom': (
        '>>> tf.stats.nbinom.pmf(0, 2.0, 0.5)\n'
        'tensor(0.25)\n'
    ),
    'tenferro.stats.multivariate_normal': (
        '>>> x = tf.tensor([1.0, 0.0], requires_grad=True)\n'
        '>>> cov = tf.tensor([[2.0, 0.0], [0.0, 1.0]])\n'
        '>>> tf.stats.multivariate_normal.logpdf(x, [0.0, 0.0], cov)\n'
        'tensor(-2.43445066, grad_fn=...)\n'
        '>>> tf.grad([tf.stats.multivariate_normal.logpdf(x, [0.0, 0.0], cov)], [x])[0]\n'
        'tensor([-0.5, -0. ])\n'
    ),
    'tenferro.stats.dirichlet': (
        '>>> tf.stats.dirichlet.logpdf(tf.tensor([0.2, 0.3, 0.5]), tf.tensor([1.0, 2.0, 3.0]))\n'
        'tensor(1.5040774)\n'
    ),
    'tenferro.fft.fft': (
        '>>> x = tf.tensor([1.0, 2.0, 0.0, -1.0], requires_grad=True)\n'
        '>>> tf.fft.fft(x)\n'
        'tensor([2.-0.j, 1.-3.j, 0.-0.j, 1.+3.j], dtype=complex128, grad_fn=fft.c2c)\n'
        '>>> tf.grad([tf.fft.fft(x).real.sum()], [x])[0]\n'
        'tensor([4., 0., 0., 0.])\n'
    ),
    'tenferro.fft.ifft': (
        '>>> tf.fft.ifft(tf.fft.fft(tf.tensor([1.0, 2.0, 0.0, -1.0]))).real\n'
        'tensor([ 1.,  2.,  0., -1.])\n'
    ),
    'tenferro.fft.fftn': (
        '>>> tf.fft.fftn(tf.tensor([[1.0, 2.0], [3.0, 4.0]]))\n'
        'tensor([[10.-0.j, -2.-0.j],\n'
        '        [-4.-0.j,  0.-0.j]], dtype=complex128)\n'
    ),
    'tenferro.fft.ifftn': (
        '>>> tf.fft.ifftn(tf.tensor([[10.0, -2.0], [-4.0, 0.0]])).real\n'
        'tensor([[1., 2.],\n'
        '        [3., 4.]])\n'
    ),
    'tenferro.fft.rfft': (
        '>>> x = tf.tensor([1.0, 2.0, 0.0, -1.0], requires_grad=True)\n'
        '>>> tf.fft.rfft(x)\n'
        'tensor([2.+0.j, 1.-3.j, 0.+0.j], dtype=complex128, grad_fn=...)\n'
        '>>> tf.grad([tf.fft.rfft(x).real.sum()], [x])[0]\n'
        'tensor([3., 0., 1., 0.])\n'
    ),
    'tenferro.fft.irfft': (
        '>>> tf.fft.irfft(tf.fft.rfft(tf.tensor([1.0, 2.0, 0.0, -1.0])))\n'
        'tensor([ 1.,  2.,  0., -1.])\n'
    ),
    'tenferro.fft.rfftn': (
        '>>> tf.fft.rfftn(tf.tensor([[1.0, 2.0], [3.0, 4.0]]))\n'
        'tensor([[10.+0.j, -2.+0.j],\n'
        '        [-4.+0.j,  0.+0.j]], dtype=complex128)\n'
    ),
    'tenferro.fft.irfftn': (
        '>>> tf.fft.irfftn(tf.fft.rfftn(tf.tensor([[1.0, 2.0], [3.0, 4.0]])), s=(2, 2), axes=(0, 1))\n'
        'tensor([[1., 2.],\n'
        '        [3., 4.]])\n'
    ),
    'tenferro.fft.hfft': (
        '>>> tf.fft.hfft(tf.tensor([1.0, 2.0, 3.0]))\n'
        'tensor([ 8., -2.,  0., -2.])\n'
    ),
    'tenferro.fft.ihfft': (
        '>>> tf.fft.ihfft(tf.tensor([1.0, 2.0, 3.0, 4.0]))\n'
        'tensor([ 2.5-0.j , -0.5-0.5j, -0.5-0.j ], dtype=complex128)\n'
    ),
    'tenferro.fft.fftfreq': (
        '>>> tf.fft.fftfreq(4)\n'
        'tensor([ 0.  ,  0.25, -0.5 , -0.25])\n'
        '>>> tf.fft.fftfreq(5, d=0.5)\n'
        'tensor([ 0. ,  0.4,  0.8, -0.8, -0.4])\n'
    ),
    'tenferro.fft.rfftfreq': (
        '>>> tf.fft.rfftfreq(4)\n'
        'tensor([0.  , 0.25, 0.5 ])\n'
    ),
    'tenferro.fft.fftshift': (
        '>>> tf.fft.fftshift(tf.fft.fftfreq(5))\n'
        'tensor([-0.4, -0.2,  0. ,  0.2,  0.4])\n'
    ),
    'tenferro.fft.ifftshift': (
        '>>> tf.fft.ifftshift(tf.fft.fftshift(tf.fft.fftfreq(5)))\n'
        'tensor([ 0. ,  0.2,  0.4, -0.4, -0.2])\n'
    ),
    'tenferro.fft.dct': (
        '>>> x = tf.tensor([1.0, 0.0, 0.0], requires_grad=True)\n'
        ">>> tf.fft.dct(x, norm='ortho')\n"
        'tensor([0.57735027, 0.70710678, 0.40824829], grad_fn=...)\n'
        ">>> tf.grad([tf.fft.dct(x, norm='ortho')[0]], [x])[0]\n"
        'tensor([0.57735027, 0.57735027, 0.57735027])\n'
    ),
    'tenferro.fft.idct': (
        '>>> tf.fft.idct(tf.fft.dct(tf.tensor([1.0, 2.0, 3.0])))\n'
        'tensor([1., 2., 3.])\n'
    ),
    'tenferro.fft.dctn': (
        ">>> tf.fft.dctn(tf.tensor([[1.0, 2.0], [3.0, 4.0]]), norm='ortho')\n"
        'tensor([[ 5., -1.],\n'
        '        [-2.,  0.]])\n'
    ),
    'tenferro.fft.idctn': (
        '>>> tf.fft.idctn(tf.fft.dctn(tf.tensor([[1.0, 2.0], [3.0, 4.0]])))\n'
        'tensor([[1., 2.],\n'
        '        [3., 4.]])\n'
    ),
    'tenferro.fft.dst': (
        '>>> x = tf.tensor([1.0, 0.0, 0.0], requires_grad=True)\n'
        ">>> tf.fft.dst(x, norm='ortho')\n"
        'tensor([0.40824829, 0.70710678, 0.57735027], grad_fn=...)\n'
        ">>> tf.grad([tf.fft.dst(x, norm='ortho')[0]], [x])[0]\n"
        'tensor([0.40824829, 0.81649658, 0.40824829])\n'
    ),
    'tenferro.fft.idst': (
        '>>> tf.fft.idst(tf.fft.dst(tf.tensor([1.0, 2.0, 3.0])))\n'
        'tensor([1., 2., 3.])\n'
    ),
    'tenferro.fft.dstn': (
        ">>> tf.fft.dstn(tf.tensor([[1.0, 2.0], [3.0, 4.0]]), norm='ortho')\n"
        'tensor([[ 5., -1.],\n'
        '        [-2.,  0.]])\n'
    ),
    'tenferro.fft.idstn': (
        '>>> tf.fft.idstn(tf.fft.dstn(tf.tensor([[1.0, 2.0], [3.0, 4.0]])))\n'
        'tensor([[1., 2.],\n'
        '        [3., 4.]])\n'
    ),
}
