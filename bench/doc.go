// Package bench measures terraform-provider-ray against a real Ray cluster and
// its pure topology maths. Nothing here runs under a plain `go test ./...`
// except unit tests of the helpers themselves: the measurements are driven by
// the bench/cmd/raybench program (see scripts/bench.sh and bench/README.md),
// and the Go benchmarks in this package skip unless TF_ACC=1.
//
// Three measurements:
//
//   - Apply: driver.Run with the Spec the ray_virtual_cluster resource builds,
//     timed phase by phase, side by side with a Python baseline that makes the
//     same placement groups with ray.util.placement_group; plus one full
//     `tofu apply` + `tofu destroy` through a dev_overrides CLI config.
//   - Refresh/plan: HTTP calls and time of the resource's Read path
//     (the provider process's one shared group list, resources.ProviderData.
//     LiveGroups, + the drift comparison) for many clusters,
//     counted with rayclient.Client.RequestCount and with a counting reverse
//     proxy in front of the dashboard while `tofu plan` runs.
//   - Topology: growth tables of internal/topology's ns/node benchmarks.
package bench
