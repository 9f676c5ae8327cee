package session

import (
	"context"
	"fmt"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// The session's reads and writes of Ray beside the driver's jobs: the live
// lists, the dashboard's version and the job-record notes (ownership
// transfers, namespace quotas).

// QuotaNote is a namespace quota as its note tells it.
type QuotaNote = driver.QuotaNote

// RayVersion is what the dashboard reports of the Ray it serves.
type RayVersion = rayclient.Version

// RayVersionInfo asks the dashboard for its Ray version (not cached: the data
// sources report its session name too).
func (d *Session) RayVersionInfo(ctx context.Context) (*RayVersion, error) {
	return d.Client.Version(ctx)
}

// AliveNodes lists Ray's alive nodes.
func (d *Session) AliveNodes(ctx context.Context) ([]raystate.Node, error) {
	return liveview.ListAliveNodes(ctx, d.Client)
}

// LiveGroups lists Ray's placement groups that are not removed, read now.
func (d *Session) LiveGroups(ctx context.Context) ([]raystate.PlacementGroup, error) {
	return liveview.ListLiveGroups(ctx, d.Client)
}

// FreshSnapshot reads the nodes and groups now, not the process's shared view.
func (d *Session) FreshSnapshot(ctx context.Context) (*planning.Snapshot, error) {
	return liveview.FetchSnapshot(ctx, d.Client)
}

// IsUnauthorized reports whether Ray refused the request's credentials.
func IsUnauthorized(err error) bool { return rayclient.IsUnauthorized(err) }

// RecordTransfer leaves the note that tells the former owner's next plan
// that owner to took the cluster name in namespace from owner from.
func (d *Session) RecordTransfer(ctx context.Context, namespace, name, from, to string) error {
	return driver.RecordTransfer(ctx, d.Client, driver.Transfer{Namespace: namespace, Name: name, From: from, To: to, At: time.Now()})
}

// DeleteTransfer removes the ownership note of cluster name, if any.
func (d *Session) DeleteTransfer(ctx context.Context, namespace, name string) error {
	return driver.DeleteTransfer(ctx, d.Client, namespace, name)
}

// StoreQuota writes (caps nil: deletes) the quota of namespace ns in Ray's
// KV, in a job, for owner; claim takes over a quota another owner declared.
func (d *Session) StoreQuota(ctx context.Context, ns, owner string, caps *contract.QuotaCaps, claim bool) error {
	_, err := d.Jobs.Run(ctx, contract.QuotaWriteRequest(ns, owner, caps, claim), nil)
	return err
}

// RecordQuotaNote leaves the note through which plans see the quota of ns.
func (d *Session) RecordQuotaNote(ctx context.Context, ns, owner string, caps contract.QuotaCaps) error {
	return driver.RecordQuotaNote(ctx, d.Client, driver.QuotaNote{Namespace: ns, Owner: owner, QuotaCaps: caps})
}

// DeleteQuotaNote removes the quota note of ns.
func (d *Session) DeleteQuotaNote(ctx context.Context, ns string) error {
	return driver.DeleteQuotaNote(ctx, d.Client, ns)
}

// QuotaNoteID is the job record that holds the quota note of ns.
func QuotaNoteID(ns string) string { return driver.QuotaNoteID(ns) }

// ReadQuota is the quota of ns, read now (plan_timeout bounds the note's
// read): its note or, with none, the KV's (limits empty: a quota whose
// note is missing); nil when the namespace has no quota.
func (d *Session) ReadQuota(ctx context.Context, ns string) (*QuotaNote, error) {
	rctx, cancel := d.PlanReadContext(ctx)
	defer cancel()
	note, err := driver.ReadQuotaNote(rctx, d.Client, ns)
	if err == nil && note == nil {
		var res *contract.Result
		if res, err = d.Jobs.Run(ctx, contract.QuotaUsageRequest(ns), nil); err == nil && res.Quota != nil {
			note = &driver.QuotaNote{Namespace: ns, Owner: res.Quota.Owner}
		}
	}
	return note, err
}

// ReadRecord reads the record of cluster name in ns, and which of the
// groups named alike live in ns, with a job that writes nothing.
func (d *Session) ReadRecord(ctx context.Context, ns, name string, alike ...string) (*contract.Result, error) {
	res, err := d.Jobs.Run(ctx, contract.ReadRequest(ns, name, alike...), nil)
	if err == nil {
		err = res.Err()
	}
	return res, err
}

// Reservations reads the reservations of ns with a job that writes nothing.
func (d *Session) Reservations(ctx context.Context, ns string) (*contract.Result, error) {
	return d.Jobs.Run(ctx, contract.ReservationsRequest(ns), nil)
}

// SharedGroups is the process's one list of placement groups (dropped by
// every write), shared by refreshes, plan checks and queries.
func (d *Session) SharedGroups(ctx context.Context) ([]raystate.PlacementGroup, error) {
	return d.Live.Groups(ctx)
}

// SharedSnapshot is the process's one snapshot of nodes and groups for plans.
func (d *Session) SharedSnapshot(ctx context.Context) (*planning.Snapshot, error) {
	return d.Live.Snapshot(ctx)
}

// LabelSupportError is src.MissingLabelSupport, asking Ray for its version
// (for the message) only when labels are missing.
func (d *Session) LabelSupportError(ctx context.Context, src clusterspec.TopologySource, nodes []raystate.Node) error {
	if src.MissingLabelSupport(nodes, "") == nil {
		return nil
	}
	version := "(version unknown)"
	if v, err := d.Client.Version(ctx); err == nil {
		version = v.RayVersion
	}
	return src.MissingLabelSupport(nodes, version)
}

// NodeDeathTime is when the first of nodes died, as Ray reports it (a
// state-API read per node); known is false when Ray no longer lists them
// (it keeps a bounded number of dead ones). Ray's clock (the head's) is
// compared with this machine's by the caller.
func (d *Session) NodeDeathTime(ctx context.Context, nodes []string) (since time.Time, known bool, err error) {
	ctx, cancel := d.PlanReadContext(ctx)
	defer cancel()
	for _, id := range nodes {
		listed, err := d.Client.ListNodes(ctx, rayclient.ListOptions{Filters: []rayclient.Filter{rayclient.Eq("node_id", id)}, Detail: true})
		if err != nil {
			return since, false, err
		}
		for _, n := range listed {
			if n.EndTimeMs <= 0 {
				return since, false, fmt.Errorf("the state API lists node %s as %s, with no time of death", raystate.ShortID(id), n.State)
			}
			if died := time.UnixMilli(n.EndTimeMs); !known || died.Before(since) {
				since, known = died, true
			}
		}
	}
	return since, known, nil
}
