package session

import (
	"fmt"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// DashboardIssue explains a failed call to the dashboard at address:
// rejected credentials and an unreachable cluster need different fixes.
func DashboardIssue(address string, err error) clusterspec.Issue {
	if IsUnauthorized(err) {
		return clusterspec.Issue{Summary: "Ray rejected the credentials", Detail: credentialsDetail(address, err)}
	}
	return clusterspec.Issue{Summary: "Cannot reach the Ray dashboard", Detail: UnreachableDetail(address, err)}
}

// ErrorDetail is err's message followed by what a user does about it: the
// driver's fix for its failure (contract.Fix), new credentials, or, for a
// failed call to Ray, checking the cluster and running the command again.
func ErrorDetail(err error) string {
	switch fix := contract.Fix(err); {
	case fix != "":
		return err.Error() + "\n\n" + fix
	case rayclient.IsUnauthorized(err):
		return err.Error() + "\n\n" + credentialsFix
	}
	return err.Error() + "\n\n" + retryFix
}

// retryFix ends the detail of a failed call to Ray that a retry may cure.
const retryFix = "Check that the Ray cluster is up and its dashboard answers at the provider's address " +
	"(`ray status` on the head node), then run the command again."

const credentialsFix = "The cluster uses token authentication: set the provider's token (or RAY_AUTH_TOKEN) to " +
	"the cluster's token, which `ray get-auth-token` prints on the head node."

func credentialsDetail(address string, err error) string {
	return fmt.Sprintf("The Ray dashboard at %s refused the request: %v\n\n%s", address, err, credentialsFix)
}

func UnreachableDetail(address string, err error) string {
	if strings.Contains(err.Error(), "malformed HTTP response") {
		return fmt.Sprintf("The server at %s does not speak HTTP/1: %v\n\nThis is usually Ray's GCS port (6379 by "+
			"default, the address of `ray start --address`), which speaks gRPC. The provider needs the dashboard's "+
			"HTTP address, the one `ray job submit` uses: http://<head>:8265 by default.", address, err)
	}
	return fmt.Sprintf("No Ray dashboard answered at %s: %v\n\nStart a local cluster with `ray start --head "+
		"--dashboard-host=127.0.0.1` (needs `pip install \"ray[default]\"`), or point the provider's address "+
		"(or RAY_ADDRESS) at a running cluster's dashboard.", address, err)
}
