"""`python -m tenferro.rules` prints a table generated from the registered ops."""
import subprocess
import sys

import numpy as np

import tenferro as tf
from tenferro import rules
from tenferro._ops.registry import OPS, Op


def test_table_has_every_registered_op():
    names = [row[0] for row in rules.table()]
    assert names == sorted(OPS)
    for expected in ("exp", "add", "sum", "reshape", "where", "abs"):
        assert expected in names


def test_table_reflects_op_attributes(monkeypatch):
    fake = Op("zz_fake", vjp=lambda *a: None, jvp=None, complex=False, second_order=False)
    monkeypatch.setitem(OPS, "zz_fake", fake)
    row = [r for r in rules.table() if r[0] == "zz_fake"][0]
    assert row == ("zz_fake", "yes", "-", "-", "-", "yes")
    atan2 = [r for r in rules.table() if r[0] == "atan2"][0]
    assert atan2[4] == "-"                       # real only


def test_module_prints_table(tmp_path):
    out = subprocess.run([sys.executable, "-m", "tenferro.rules"], capture_output=True,
                         text=True, check=True, cwd=tmp_path).stdout
    lines = out.splitlines()
    assert lines[0].split() == ["op", "vjp", "jvp", "2nd", "order", "complex", "batched"]
    assert any(line.split()[:3] == ["exp", "yes", "yes"] for line in lines[2:] if line)
    assert f"{len(OPS)} ops" in out


def test_generic_builder():
    x = tf.tensor([0.5, 1.0], requires_grad=True)
    b = tf.builder(tf.exp)(x)
    assert isinstance(b, tf.Builder)
    y = b.run()
    np.testing.assert_allclose(y.numpy(), np.exp([0.5, 1.0]))
    s = tf.builder(tf.sum)(x).with_options(keepdims=True).run()
    assert s.shape == (1,)
    assert tf.builder(tf.exp).__name__ == "exp_ad"
