// Command terraform-provider-ray serves the Ray provider to Terraform and OpenTofu.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

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

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address:         Address,
		Debug:           debug,
		ProtocolVersion: 6,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
