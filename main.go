// Command terraform-provider-ray serves the Ray provider to Terraform and OpenTofu.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/ray-infra/terraform-provider-ray/internal/provider"
)

// version is set by goreleaser at release time.
var version = "dev"

// Address is the provider's registry source address.
const Address = "registry.terraform.io/ray-infra/ray"

func main() {
	if provider.FinishHandedOffCleanup(os.Args[1:]) { // a detached child of an earlier provider process
		return
	}
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	stopProfile := provider.SetUpProcess()
	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	// Not providerserver.Serve: NewProtocol6Server also repairs OpenTofu's
	// null function arguments.
	err := tf6server.Serve(Address, provider.NewProtocol6Server(version), opts...)
	stopProfile()
	if err != nil {
		log.Fatal(err.Error())
	}
}
