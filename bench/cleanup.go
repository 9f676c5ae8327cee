package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// LiveNames lists the live (not REMOVED) placement groups whose names start
// with prefix.
func LiveNames(ctx context.Context, c *rayclient.Client, prefix string) ([]string, error) {
	groups, err := liveview.ListLiveGroups(ctx, c)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	for _, g := range groups {
		if strings.HasPrefix(g.Name, prefix) && !seen[g.Name] {
			seen[g.Name] = true
			names = append(names, g.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Sweep removes every live group whose name starts with prefix, in the
// baseline's namespace (through the persistent Python driver, when given)
// and then, for what is left, through driver delete jobs in the provider's
// namespace and the baseline's. It returns what it
// found left over.
func Sweep(c *rayclient.Client, base *Baseline, python, namespace, prefix string) ([]string, error) {
	if !strings.HasPrefix(prefix, "bench-") {
		return nil, fmt.Errorf("refusing to sweep groups outside the bench- prefix (%q)", prefix)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	left, err := LiveNames(ctx, c, prefix+"-")
	if err != nil || len(left) == 0 {
		return nil, err
	}
	if base != nil {
		_, _ = base.Remove(left)
	}
	still, err := LiveNames(ctx, c, prefix+"-")
	if err != nil || len(still) == 0 {
		return left, err
	}
	for _, ns := range []string{namespace, BaselineNamespace} { // names are per namespace
		if len(still) == 0 {
			break
		}
		groups := make([]clusterspec.GroupRequest, len(still))
		for i, name := range still {
			groups[i] = clusterspec.GroupRequest{Name: name}
		}
		spec := contract.NewRequest(contract.ActionDelete, ns, groups, false, topology.PortRange{}, 0)
		if _, err := driver.Run(ctx, c, python, spec, driver.RunOptions{}); err != nil {
			return left, err
		}
		if still, err = LiveNames(ctx, c, prefix+"-"); err != nil {
			return left, err
		}
	}
	still, err = LiveNames(ctx, c, prefix+"-")
	if err == nil && len(still) > 0 {
		err = fmt.Errorf("groups still live after the sweep: %s", strings.Join(still, ", "))
	}
	return left, err
}
