// Package bench measures terraform-provider-ray against a real Ray cluster and
// its pure topology maths. `go test ./bench/` runs only unit tests of the
// helpers themselves: the measurements are driven by the bench/cmd/raybench
// program (scripts/bench.sh), and every one of them fills a table of
// bench/README.md:
//
//   - Reference: driver.Run with the Spec the ray_virtual_cluster resource
//     builds, timed phase by phase, side by side with the reference's own work
//     (reference_baseline.py) and the bare ray.util.placement_group floor
//     (baseline.py); plus one full `tofu apply` + `tofu destroy` through a
//     dev_overrides CLI configuration (internal/devprovider).
//   - GPU64: a real apply + destroy of 64 GPU bundles (segment_size = 2) next
//     to NeMo-RL's own cold path, and a 16-bundle apply next to its floor
//     (an empty job plus one cold python placing the groups), on an 8 x 8
//     GPU cluster of its own.
//   - Refresh/plan: HTTP calls and time of the resource's Read path (one
//     liveview.LiveView per CLI run, whose group list every Read shares, and
//     the drift comparison) for many clusters, counted with a
//     rayclienttest.Counter on the client and with a counting reverse proxy in
//     front of the dashboard while `tofu plan` runs.
//   - Topology: growth tables of internal/topology's ns/node benchmarks, the
//     Go maths against the Python reference (internal/topology/topologyref),
//     and the topology data source at 10,000 nodes against the stand-in
//     dashboard (internal/standin).
package bench
