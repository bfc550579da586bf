"""Differentiable ops: each module holds its ops' primals, rules and errors together."""
