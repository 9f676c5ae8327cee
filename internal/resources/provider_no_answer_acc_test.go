package resources_test

import (
	"fmt"
	"net"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// silentAddress is a local listener that accepts connections and never
// answers them (nothing is ever read or written).
func silentAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(conns)
				return
			}
			conns <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// An address that accepts TCP and never answers fails the plan once the
// default plan_timeout (30s) is over, naming the address, the request that
// went unanswered and the usual mistakes, instead of waiting through every
// retry and passing with a warning. (A refused connection still plans with
// a warning: TestAccVirtualCluster_planWithUnreachableRay.)
func TestAccVirtualCluster_planFailsWhenRayNeverAnswers(t *testing.T) {
	addr := silentAddress(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheckCLI(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config:   acctest.HCL(acctest.Provider{Address: addr}, acctest.VirtualCluster{Name: "silent", Counts: []int{1}}),
			PlanOnly: true,
			ExpectError: wrappedRE("Ray does not answer", "Nothing answered at "+regexp.QuoteMeta(addr),
				"within plan_timeout \\(30s\\)", "Tried: ray: GET /api/version", "connect_timeout 5s, request_timeout 30s",
				"port 6379 is Ray's GCS port", "listens on 8265", "ray://host:10001` address is a Ray Client address"),
		}},
	})
}

// A zero or negative plan_timeout or connect_timeout is refused, naming the
// attribute, before anything is read or created.
func TestAccProvider_badTimeouts(t *testing.T) {
	for _, attr := range []string{"plan_timeout", "connect_timeout"} {
		for _, value := range []string{"0s", "-5s"} {
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheckCLI(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				Steps: []resource.TestStep{{
					Config: acctest.HCL(acctest.Provider{Extra: []acctest.Attr{{Key: attr, Expr: acctest.Quote(value)}}},
						acctest.VirtualCluster{Name: "badtimeout", Counts: []int{1}}),
					PlanOnly:    true,
					ExpectError: wrappedRE("Invalid duration", regexp.QuoteMeta(fmt.Sprintf("%s = %q: must be a positive Go duration", attr, value))),
				}},
			})
		}
	}
}
