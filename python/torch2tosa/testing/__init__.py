"""Oracles the tests and the benchmark share: integer references of what the INT lowerings
compute, and timing in turns. Nothing in the compiler imports this package.
"""
