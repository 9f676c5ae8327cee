package session

import (
	"sync"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// Session is one configured provider's connection to Ray, handed to every
// resource and data source: the client and driver settings, the reads
// shared within the process and the ledger of what its plans claim.
type Session struct {
	Client           *rayclient.Client
	Namespace        string
	PythonExecutable string
	RuntimeEnv       map[string]any
	// Version is the provider's version, written into cluster records.
	Version string
	// CapacityCheck is the provider's capacity_check, the default of every
	// cluster's ("" means clusterspec.DefaultCapacityCheck).
	CapacityCheck string
	// TopologyLabels is the provider's topology_labels.
	TopologyLabels *clusterspec.TopologySource

	// PlanTimeout bounds each plan-time read (PlanReadContext); 0 means
	// DefaultPlanTimeout.
	PlanTimeout time.Duration

	// Jobs runs driver requests, those arriving together in one Ray job.
	Jobs *driver.Batcher

	// Live is this process's view of the cluster: one group list shared by
	// Reads and plan checks (dropped by writes), one snapshot per plan.
	Live *liveview.LiveView

	mu    sync.Mutex
	ports map[string]portClaim   // port ranges of the clusters planned so far
	names map[string][]nameClaim // "<namespace>/<name>" -> the clusters that planned it

	planned choices // what each cluster planned for creation takes (PlanChoose)

	chosen choices // pinned groups of the clusters whose nodes this process chose (ChooseNodes)

	rayVersion rayVersionCache // CachedRayVersion (run.go)
	planReads  planReads       // PlanReadContext (planreads.go)
	transfers  transferReads   // ReadTransfer (transfer_reads.go)
	quotas     quotaReads      // QuotaNote, QuotaUsage (quota_reads.go)
}

// New bundles the configured client and driver settings.
func New(client *rayclient.Client, namespace, python, version string, runtimeEnv map[string]any) *Session {
	d := &Session{Client: client, Live: liveview.NewLiveView(client), Namespace: namespace, PythonExecutable: python, RuntimeEnv: runtimeEnv, Version: version}
	d.UseJobs(driver.NewBatcher(nil, "", driver.RunOptions{}))
	return d
}

// UseJobs makes jobs run this configuration's driver jobs (the provider
// shares one batcher with its protocol server, which counts the writes in
// progress).
func (d *Session) UseJobs(jobs *driver.Batcher) {
	jobs.Reconfigure(d.Client, d.PythonExecutable, driver.RunOptions{RuntimeEnv: d.RuntimeEnv, BackgroundCleanup: true})
	d.Jobs = jobs
}

// Configured reports whether the provider has a client: its address may
// depend on a resource not created yet.
func (d *Session) Configured() bool { return d != nil && d.Client != nil }

// Address is the dashboard address the session talks to.
func (d *Session) Address() string { return d.Client.Address() }
