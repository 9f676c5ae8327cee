// Package resources is the Terraform face of the provider: the
// ray_virtual_cluster resource and list resource, the ray_virtual_cluster
// and ray_cluster_topology data sources, as adapters between the plugin
// framework and the packages that do the work (clusterspec, placement,
// planning, drift, record, liveview, driver). Plans and reads run under
// driver.ReadOnly.
package resources

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// ProviderData is what the provider hands every resource and data source.
type ProviderData struct {
	Client           *rayclient.Client
	Namespace        string
	PythonExecutable string
	RuntimeEnv       map[string]any
	// Version is the provider's version, written into cluster records.
	Version string
	// CapacityCheck is the provider's capacity_check, the default of every
	// cluster's ("" means clusterspec.DefaultCapacityCheck).
	CapacityCheck string
	// TopologyLabels is the provider's topology_labels; nil for the resources.
	TopologyLabels *clusterspec.TopologySource

	// PlanTimeout bounds each plan-time read (planReadContext); 0 means
	// DefaultPlanTimeout.
	PlanTimeout time.Duration

	// Jobs runs driver requests, those arriving together in one Ray job.
	Jobs *driver.Batcher

	// Live is this process's view of the cluster: one group list shared by
	// Reads and plan checks (dropped by writes), one snapshot per plan.
	Live *liveview.LiveView

	mu      sync.Mutex
	ports   map[string]portClaim   // port ranges of the clusters planned so far
	names   map[string][]nameClaim // "<namespace>/<name>" -> the clusters that planned it
	planned map[string][]clusterspec.GroupRequest

	chooseMu sync.Mutex                            // one apply-time node choice at a time
	chosen   map[string][]clusterspec.GroupRequest // pinned groups of the clusters whose nodes this process chose

	rayVersion rayVersionCache // CachedRayVersion (virtual_cluster_native.go)
	planReads  planReads       // planReadContext (planreads.go)
	transfers  transferReads   // readTransfer (transfer_reads.go)
	quotas     quotaReads      // quotaNote, quotaUsage (quota_reads.go)
}

// nameClaim is one cluster's claim on a name in this provider process.
type nameClaim struct {
	identity  string // owner token; "" for a cluster not created yet
	replacing bool   // its create half (planned with no prior state) is still to come
}

// ClaimName records that a cluster of this configuration plans name in
// namespace and reports whether another cluster did so first. identity is
// the cluster's owner token ("" when it is not created yet) so that a
// re-plan of the same cluster is no clash; a replacement's create half
// (planned again without prior state) takes up the claim of its first half.
func (d *ProviderData) ClaimName(namespace, name, identity string, replacing bool) (clash bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.names == nil {
		d.names = map[string][]nameClaim{}
	}
	key := namespace + "/" + name
	claims := d.names[key]
	for i, c := range claims {
		if identity == "" && c.replacing {
			claims[i].replacing = false
			return false
		}
		if identity != "" && c.identity == identity {
			return false
		}
	}
	d.names[key] = append(claims, nameClaim{identity: identity, replacing: replacing})
	return len(claims) > 0
}

// PlannedHere reports whether the cluster name in namespace is one this run
// plans to replace, or (owner not "") one whose state holds owner token
// owner: the create half of a replacement finds the old cluster's groups
// in Ray, and they are its own.
func (d *ProviderData) PlannedHere(namespace, name, owner string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.ContainsFunc(d.names[namespace+"/"+name], func(c nameClaim) bool {
		return c.replacing || (owner != "" && c.identity == owner)
	})
}

// ClaimCapacity records the groups a cluster about to be created plans to
// place and returns those of the clusters planned before it in this run.
func (d *ProviderData) ClaimCapacity(key string, groups []clusterspec.GroupRequest) (others []clusterspec.GroupRequest) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.planned == nil {
		d.planned = map[string][]clusterspec.GroupRequest{}
	}
	keys := make([]string, 0, len(d.planned))
	for k := range d.planned {
		if k != key {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		others = append(others, d.planned[k]...)
	}
	d.planned[key] = groups
	return others
}

// ChooseNodes runs choose, which picks a cluster's nodes at apply, with the
// pinned groups of the other clusters this process chose nodes for (their
// groups may not be in Ray's list yet), one cluster at a time, and records
// the groups it returns under key (nil records nothing). Two clusters
// created in parallel thus never pick the same free nodes.
func (d *ProviderData) ChooseNodes(key string, choose func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest) {
	d.chooseMu.Lock()
	defer d.chooseMu.Unlock()
	var others []clusterspec.GroupRequest
	for _, k := range slices.Sorted(maps.Keys(d.chosen)) {
		if k != key {
			others = append(others, d.chosen[k]...)
		}
	}
	if groups := choose(others); groups != nil {
		if d.chosen == nil {
			d.chosen = map[string][]clusterspec.GroupRequest{}
		}
		d.chosen[key] = groups
	}
}

// ForgetChosen drops what ChooseNodes recorded for key (its create failed).
func (d *ProviderData) ForgetChosen(key string) {
	d.chooseMu.Lock()
	defer d.chooseMu.Unlock()
	delete(d.chosen, key)
}

// portClaim is one cluster's probed port range and the nodes its bundles
// may use: nil when it is not pinned to known nodes (any node).
type portClaim struct {
	ports topology.PortRange
	nodes []string
}

// maxNamedNodes is how many shared nodes a port-overlap warning names.
const maxNamedNodes = 3

// ClaimPorts records a cluster's port range and the nodes its bundles may
// use (nil: any node) and returns the clusters planned earlier in this run
// whose ranges overlap it on a node both may use, naming that node. Ports
// are only unique per node, so clusters pinned to disjoint nodes never clash.
func (d *ProviderData) ClaimPorts(name string, r topology.PortRange, nodes []string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ports == nil {
		d.ports = map[string]portClaim{}
	}
	var clash []string
	for other, o := range d.ports {
		if other == name || !o.ports.Overlaps(r) {
			continue
		}
		shared, anyNode := sharedNodes(nodes, o.nodes)
		switch {
		case anyNode:
			clash = append(clash, fmt.Sprintf("%s %s on any node", other, o.ports))
		case len(shared) > 0:
			where := "node " + strings.Join(shared[:min(len(shared), maxNamedNodes)], ", node ")
			if len(shared) > maxNamedNodes {
				where += fmt.Sprintf(" and %d more", len(shared)-maxNamedNodes)
			}
			clash = append(clash, fmt.Sprintf("%s %s on %s", other, o.ports, where))
		}
	}
	sort.Strings(clash)
	d.ports[name] = portClaim{ports: r, nodes: nodes}
	return clash
}

// sharedNodes is the sorted nodes two clusters may both use (nil standing
// for any node); anyNode is true when neither is pinned to known nodes.
func sharedNodes(a, b []string) (shared []string, anyNode bool) {
	switch {
	case a == nil && b == nil:
		return nil, true
	case a == nil:
		shared = slices.Clone(b)
	case b == nil:
		shared = slices.Clone(a)
	default:
		for _, id := range a {
			if slices.Contains(b, id) {
				shared = append(shared, id)
			}
		}
	}
	slices.Sort(shared)
	return slices.Compact(shared), false
}

// capacityCheck is a cluster's capacity_check: its own when set, else the
// provider's, else clusterspec.DefaultCapacityCheck.
func (d *ProviderData) capacityCheck(own types.String) string {
	return cmp.Or(own.ValueString(), d.CapacityCheck, clusterspec.DefaultCapacityCheck)
}

// NewProviderData bundles the configured client and driver settings.
func NewProviderData(client *rayclient.Client, namespace, python, version string, runtimeEnv map[string]any) *ProviderData {
	d := &ProviderData{Client: client, Live: liveview.NewLiveView(client), Namespace: namespace, PythonExecutable: python, RuntimeEnv: runtimeEnv, Version: version}
	d.UseJobs(driver.NewBatcher(nil, "", driver.RunOptions{}))
	return d
}

// UseJobs makes jobs run this configuration's driver jobs (the provider
// shares one batcher with its protocol server, which counts the writes in
// progress).
func (d *ProviderData) UseJobs(jobs *driver.Batcher) {
	jobs.Reconfigure(d.Client, d.PythonExecutable, driver.RunOptions{RuntimeEnv: d.RuntimeEnv, BackgroundCleanup: true})
	d.Jobs = jobs
}

// providerDataFrom extracts ProviderData from Configure's request data.
func providerDataFrom(raw any, diags *diag.Diagnostics) *ProviderData {
	if raw == nil {
		return nil
	}
	data, ok := raw.(*ProviderData)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *resources.ProviderData, got %T; this is a provider bug", raw))
		return nil
	}
	return data
}

// requireConfigured reports a clear error when the provider has no client yet,
// e.g. because its address depends on a resource that is not created.
func requireConfigured(data *ProviderData, diags *diag.Diagnostics) bool {
	if data == nil || data.Client == nil {
		diags.AddError("Ray provider not configured",
			"The provider's configuration is not known yet (it may depend on values only known after apply). "+
				"Set address to a known value.")
		return false
	}
	return true
}
