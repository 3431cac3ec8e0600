"""Test suite.

A regular package, so `tests.*` support modules win over a stray top-level `tests`
package that a dependency may install (stop_sequencer ships one).
"""
