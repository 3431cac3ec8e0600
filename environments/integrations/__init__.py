"""Adapters that let other trainers drive rewardsmith environments (veRL agent loops,
OpenRLHF agents). Each needs its client installed; see its module."""
