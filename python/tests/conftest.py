import sys
from pathlib import Path

# The NeMo-RL stand-in (standin/README.md) is importable in every test, so
# attach() returns the RayVirtualCluster subclass throughout the suite.
sys.path.insert(0, str(Path(__file__).parent / "standin"))
