"""Stand-in for NeMo-RL in raytf-attach's tests (see ../README.md)."""
