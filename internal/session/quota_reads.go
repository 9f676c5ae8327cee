package session

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// quotaReads keeps, for one provider process, each namespace's quota note
// (one GET) and, for a namespace that has a quota, what its holders hold (a
// read-only job), so that a plan of many clusters reads each once.
type quotaReads struct {
	mu      sync.Mutex
	notes   map[string]*onceRead[*driver.QuotaNote]
	usage   map[string]*onceRead[[]contract.QuotaHolder]
	planned map[string]*contract.QuotaCaps // the limits a ray_namespace_quota of this configuration plans
	// asks is what each cluster planned for creation asks, in all and of the
	// nodes its plan chose.
	asks map[string]plannedAsk
}

// PlanQuota records the limits this configuration's quota of ns plans: the
// plans of its clusters (planned after it when they depend on it) check
// those rather than what Ray holds now.
func (d *Session) PlanQuota(ns string, caps *contract.QuotaCaps) {
	d.quotas.mu.Lock()
	defer d.quotas.mu.Unlock()
	if d.quotas.planned == nil {
		d.quotas.planned = map[string]*contract.QuotaCaps{}
	}
	d.quotas.planned[ns] = caps
}

// PlannedQuota is what PlanQuota recorded for ns (nil: nothing).
func (d *Session) PlannedQuota(ns string) *contract.QuotaCaps {
	d.quotas.mu.Lock()
	defer d.quotas.mu.Unlock()
	return d.quotas.planned[ns]
}

// onceRead is one read shared by every caller of a process.
type onceRead[T any] struct {
	once  sync.Once
	value T
	err   error
}

func shared[T any](mu *sync.Mutex, m *map[string]*onceRead[T], key string) *onceRead[T] {
	mu.Lock()
	defer mu.Unlock()
	if *m == nil {
		*m = map[string]*onceRead[T]{}
	}
	if (*m)[key] == nil {
		(*m)[key] = &onceRead[T]{}
	}
	return (*m)[key]
}

// QuotaNote is the quota of Ray namespace ns as its note tells it (nil: none).
func (d *Session) QuotaNote(ctx context.Context, ns string) (*driver.QuotaNote, error) {
	r := shared(&d.quotas.mu, &d.quotas.notes, ns)
	r.once.Do(func() {
		rctx, cancel := d.PlanReadContext(ctx)
		defer cancel()
		r.value, r.err = driver.ReadQuotaNote(rctx, d.Client, ns)
	})
	return r.value, r.err
}

// QuotaUsage is what each holder holds in Ray namespace ns, read by a job
// that writes nothing.
func (d *Session) QuotaUsage(ctx context.Context, ns string) ([]contract.QuotaHolder, error) {
	r := shared(&d.quotas.mu, &d.quotas.usage, ns)
	r.once.Do(func() {
		res, err := d.Jobs.Run(driver.ReadOnly(ctx, "plan"), contract.QuotaUsageRequest(ns), nil)
		if err == nil {
			r.value = res.QuotaUsage
		}
		r.err = err
	})
	return r.value, r.err
}

// plannedAsk is what a cluster planned for creation asks: in all, and of
// each node its plan chose (nil: Ray places it).
type plannedAsk struct {
	total topology.Resources
	nodes map[string]topology.Resources
}

// PlanAsk records what a cluster planned for creation in this process asks,
// in all and of each node its plan chose, so that the quotas of clusters
// planned beside it count it.
func (d *Session) PlanAsk(key string, total topology.Resources, nodes map[string]topology.Resources) {
	d.quotas.mu.Lock()
	defer d.quotas.mu.Unlock()
	if d.quotas.asks == nil {
		d.quotas.asks = map[string]plannedAsk{}
	}
	d.quotas.asks[key] = plannedAsk{total: total, nodes: nodes}
}

// PlannedHolders are the clusters planned for creation in this process in
// namespace ns, the cluster self aside, as quota holders.
func (d *Session) PlannedHolders(ns, self string) []contract.QuotaHolder {
	d.quotas.mu.Lock()
	defer d.quotas.mu.Unlock()
	var out []contract.QuotaHolder
	for key, ask := range d.quotas.asks {
		if key == self || !strings.HasPrefix(key, ns+"/") {
			continue
		}
		out = append(out, contract.QuotaHolder{Cluster: key, Resources: ask.total, Nodes: ask.nodes, Planned: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return out
}

// QuotaHeld is what each holder holds in Ray namespace ns (quotaUsage)
// and, when caps has label limits, each live node's labels to count them.
func (d *Session) QuotaHeld(ctx context.Context, ns string, caps contract.QuotaCaps) ([]contract.QuotaHolder, map[string]map[string]string, error) {
	used, err := d.QuotaUsage(ctx, ns)
	if err != nil || len(caps.LabelLimits) == 0 {
		return used, nil, err
	}
	snap, err := d.Live.Snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	return used, planning.NodeLabels(snap.Nodes), nil
}
