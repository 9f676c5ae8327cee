"""Prints the quickstart's outputs as a table (reads `terraform output -json` or `tofu output -json` on stdin)."""
import json
import sys

out = json.load(sys.stdin)
nodes = out["nodes"]["value"]
print(f"{len(nodes)} nodes chosen at create and kept in state: {', '.join(n[:12] + '...' for n in nodes)}")
print(f"world size {out['world_size']['value']}, master {out['master']['value']}")
rows = out["placement"]["value"]
cols = ["rank", "bundle", "node_ip", "gpu_id", "nvlink_domain", "topo_rank", "port"]
width = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols} if rows else {c: len(c) for c in cols}
print("  ".join(c.ljust(width[c]) for c in cols))
for r in rows:
    print("  ".join(str(r[c]).ljust(width[c]) for c in cols))
