// Command terraform-provider-ray serves the Ray provider to Terraform and OpenTofu.
package main

import (
	"flag"
	"log"
	"os"
	"runtime/debug"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/ray-infra/terraform-provider-ray/internal/provider"
)

// version is set by goreleaser at release time.
var version = "dev"

// Address is the provider's registry source address.
const Address = "registry.terraform.io/ray-infra/ray"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	quietLogsUnlessAsked()
	collectLessOften()
	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	// Not providerserver.Serve: NewProtocol6Server also repairs OpenTofu's
	// null function arguments.
	if err := tf6server.Serve(Address, provider.NewProtocol6Server(version), opts...); err != nil {
		log.Fatal(err.Error())
	}
}

// quietLogsUnlessAsked turns the plugin SDK's and the provider's logs off
// when no TF_LOG* variable is set. The CLI shows provider logs only when one
// is, but the SDK writes every trace line anyway (JSON on stderr, which the
// CLI parses and drops): about 40% of the CPU of planning 50 clusters.
func quietLogsUnlessAsked() {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TF_LOG") || strings.HasPrefix(kv, "TF_ACC_LOG") {
			return
		}
	}
	for _, name := range []string{"TF_LOG_SDK", "TF_LOG_PROVIDER"} {
		_ = os.Setenv(name, "OFF")
	}
}

// gcPercent is the plugin's GOGC unless the environment sets one. A plugin
// process serves one CLI command, and its live heap is small next to what
// the framework's value conversions allocate on the way (every object is
// rebuilt once per attribute while planning): at Go's default of 100, the
// collector took about a third of the plugin's CPU when planning 50 clusters.
const gcPercent = 400

// gcMemoryLimit caps what gcPercent lets the heap grow to: above it the
// collector runs as often as it must (the 10,000-node data source), unless
// GOMEMLIMIT says otherwise.
const gcMemoryLimit = 1 << 30

// collectLessOften sets gcPercent and gcMemoryLimit where GOGC and
// GOMEMLIMIT do not.
func collectLessOften() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(gcMemoryLimit)
	}
}
