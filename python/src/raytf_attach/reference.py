"""Which NeMo-RL this package follows: its RayVirtualCluster interface and its port bands."""

# nemo_rl/distributed/virtual_cluster.py and the algorithms' RayVirtualCluster
# calls were read at this commit of https://github.com/NVIDIA-NeMo/RL (main;
# nemo_rl.package_info says 0.6.0 there).
NEMO_RL_COMMIT = "7ea279abfbeb698b092856d0dab61e7cf39bc909"
NEMO_RL_VERSION = "0.6.0"
