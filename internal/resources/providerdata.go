// Package resources implements the ray_virtual_cluster resource and the
// ray_cluster_topology data source on top of the Ray HTTP client.
package resources

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// ProviderData is what the provider hands every resource and data source.
type ProviderData struct {
	Client           *rayclient.Client
	Namespace        string
	PythonExecutable string
	RuntimeEnv       map[string]any

	mu       sync.Mutex
	snapshot *vcluster.Snapshot            // cached for one provider process (one plan or apply)
	ports    map[string]topology.PortRange // port ranges of the clusters planned so far
}

// ClaimPorts records a cluster's port range and returns the clusters planned
// earlier in this run whose ranges overlap it.
func (d *ProviderData) ClaimPorts(name string, r topology.PortRange) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ports == nil {
		d.ports = map[string]topology.PortRange{}
	}
	var clash []string
	for other, o := range d.ports {
		if other != name && o.Overlaps(r) {
			clash = append(clash, fmt.Sprintf("%s %s", other, o))
		}
	}
	sort.Strings(clash)
	d.ports[name] = r
	return clash
}

// NewProviderData bundles the configured client and driver settings.
func NewProviderData(client *rayclient.Client, namespace, python string, runtimeEnv map[string]any) *ProviderData {
	return &ProviderData{Client: client, Namespace: namespace, PythonExecutable: python, RuntimeEnv: runtimeEnv}
}

// CachedSnapshot returns the live cluster snapshot, fetched once per provider
// process so that planning many clusters costs two HTTP calls in all.
func (d *ProviderData) CachedSnapshot(ctx context.Context) (*vcluster.Snapshot, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.snapshot != nil {
		return d.snapshot, nil
	}
	snap, err := vcluster.FetchSnapshot(ctx, d.Client)
	if err != nil {
		return nil, err
	}
	d.snapshot = snap
	return snap, nil
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
