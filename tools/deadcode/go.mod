// deadcode for `make lint` (scripts/deadcode.sh): go tool -modfile=tools/deadcode/go.mod deadcode.
// x/tools v0.43.0, the version the provider's own go.mod requires.
module github.com/ray-infra/terraform-provider-ray/tools/deadcode

go 1.26.8

tool golang.org/x/tools/cmd/deadcode

require (
	golang.org/x/mod v0.34.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.42.0 // indirect
	golang.org/x/telemetry v0.0.0-20260311193753-579e4da9a98c // indirect
	golang.org/x/tools v0.43.0 // indirect
)
