"""Gradients of a real loss of a complex variable, PyTorch's (tenferro's) convention vs
JAX's. Drawn at build time by matplotlib's plot directive (docs/guide/concepts.md)."""
import matplotlib.pyplot as plt
import numpy as np

import tenferro as tf


def loss(z):
    return tf.abs(z * z - 1.0) ** 2        # minima at z = +1 and z = -1


xs = np.linspace(-1.6, 1.6, 9)
grid = xs[None, :] + 1j * xs[:, None]
z = tf.tensor(grid, requires_grad=True)
(g,) = tf.grad([tf.sum(loss(z))], [z])    # elementwise loss: one pass gives every point
g = g.numpy()

fine = np.linspace(-1.7, 1.7, 200)
zz = fine[None, :] + 1j * fine[:, None]
values = np.abs(zz * zz - 1.0) ** 2

fig, axes = plt.subplots(1, 2, figsize=(9, 4.3), sharey=True)
panels = [(g, "tenferro / PyTorch: z.grad = ∂L/∂x + i ∂L/∂y", "tab:blue"),
          (np.conj(g), "JAX: grad = ∂L/∂x − i ∂L/∂y (the conjugate)", "tab:red")]
for ax, (grad, title, color) in zip(axes, panels):
    ax.contour(fine, fine, np.log1p(values), levels=12, colors="0.75", linewidths=0.7)
    # arrows of equal length along -grad, the direction of the step z - eta * grad
    d = -grad / np.maximum(np.abs(grad), 1e-12) * 0.22 * (np.abs(grad) > 1e-9)
    ax.quiver(grid.real, grid.imag, d.real, d.imag, color=color,
              angles="xy", scale_units="xy", scale=1, width=0.006)
    ax.plot([-1, 1], [0, 0], "k*", ms=10)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("Re z")
    ax.set_aspect("equal")
axes[0].set_ylabel("Im z")
fig.suptitle("L(z) = |z² − 1|², arrows along −grad: the step z − η·grad goes downhill to "
             "the minima (★) only with the left convention", fontsize=10)
fig.tight_layout()
