"""Adapters that let other trainers drive rewardsmith environments (veRL agent loops,
verifiers environments). Each needs its client installed; see its module."""
