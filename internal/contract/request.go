package contract

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Request is the driver's input: every field is filled by NewRequest, and
// driver.py applies no default of its own.
type Request struct {
	// Version is the request format (RequestVersion), the one value
	// driver.py checks besides the fields' types.
	Version int `json:"version"`
	// Action is one of ActionCreate, ActionDelete, ActionInspect.
	Action string `json:"action"`
	// Namespace is the Ray namespace the named groups live in.
	Namespace string `json:"namespace"`
	// ReadyTimeoutSeconds bounds the wait for created groups to become ready.
	ReadyTimeoutSeconds int `json:"ready_timeout_seconds"`
	// Groups lists the placement groups to act on.
	Groups []RequestGroup `json:"groups"`
	// Probe configures the per-bundle probe (create and inspect).
	Probe Probe `json:"probe"`
	// Contract carries the constants driver.py needs.
	Contract Contract `json:"contract"`
	// Ownership keeps the cluster's record in Ray's KV; nil for requests
	// that act on bare groups (tests, benchmarks).
	Ownership *Ownership `json:"ownership,omitempty"`
	// RankOrder, when set, has the driver write the cluster's record in
	// rank order (the topology sort of a unified GPU cluster), so no second
	// job has to rewrite it. Go's order stays the authority: a record whose
	// order differs from Go's is rewritten (ActionRecord).
	RankOrder *RankOrder `json:"rank_order,omitempty"`
	// RunID is echoed on every driver output line. Ray keeps a job's log
	// file when the job record is deleted and appends to it when the same
	// submission id is reused, so driver.Run sets a fresh RunID per
	// submission to tell this run's lines from older ones.
	RunID string `json:"run_id,omitempty"`
	// Batch holds the requests of an ActionBatch, run concurrently by one
	// driver; request i reports under run id RunID + "." + i.
	Batch []Request `json:"batch,omitempty"`
	// Quota is the namespace's quota: a create checks it, ActionQuota
	// writes it, a read with Usage reports it.
	Quota *QuotaRequest `json:"quota,omitempty"`
	// RemoveGroups are the groups an ActionResize removes once the groups
	// it creates are ready.
	RemoveGroups []string `json:"remove_groups,omitempty"`
	// Alternatives are the other choices of nodes a select_nodes create
	// takes, in order, when its nodes were reserved first (WithAlternatives).
	Alternatives []Alternative `json:"alternatives,omitempty"`
}

// BatchRequest runs reqs in one driver job. They share a namespace (a
// driver connects to Ray in one); the batch's ready timeout is the longest.
func BatchRequest(reqs []Request) Request {
	b := Request{Version: RequestVersion, Action: ActionBatch, Contract: DriverContract(), Batch: reqs,
		Probe: Probe{PortRangeLow: clusterspec.DefaultPorts.Low, PortRangeHigh: clusterspec.DefaultPorts.High}}
	for _, r := range reqs {
		b.Namespace = r.Namespace
		b.ReadyTimeoutSeconds = max(b.ReadyTimeoutSeconds, r.ReadyTimeoutSeconds)
	}
	return b
}

// validateBatch checks a batch and every request in it.
func (r Request) validateBatch() error {
	if len(r.Batch) == 0 || len(r.Groups) > 0 || r.Ownership != nil {
		return errors.New("driver request: a batch holds requests only; build it with contract.BatchRequest")
	}
	for i, sub := range r.Batch {
		if sub.Action == ActionBatch || sub.RunID != "" {
			return fmt.Errorf("driver request: batch[%d] is a batch or carries its own run_id", i)
		}
		if sub.Namespace != r.Namespace {
			return fmt.Errorf("driver request: batch[%d] is in namespace %q, the batch in %q", i, sub.Namespace, r.Namespace)
		}
		if err := sub.Validate(); err != nil {
			return fmt.Errorf("batch[%d]: %w", i, err)
		}
	}
	return nil
}

// RankOrder is what the driver needs to sort bundles as
// topology.SortBundleIndicesByTopology does.
type RankOrder struct {
	SegmentSize *int `json:"segment_size"`
	GPUsPerNode int  `json:"gpus_per_node"`
}

// RequestGroup is one named placement group of a request.
type RequestGroup struct {
	Name     string `json:"name"`
	Strategy string `json:"strategy"`
	// Bundles are resource maps, e.g. {"CPU": 1, "GPU": 1}.
	Bundles []map[string]float64 `json:"bundles"`
	// BundleLabelSelector pins bundles to node labels (one map per bundle),
	// e.g. {"ray.io/node-id": "<id>"}; nil for none.
	BundleLabelSelector []map[string]string `json:"bundle_label_selector,omitempty"`
	// TopologyStrategy is Ray's topology_strategy (label key -> strategy,
	// the node-level strategy under NodeIDLabel); nil for none. The driver
	// then passes it instead of Strategy, which Ray does not accept with it.
	TopologyStrategy map[string]string `json:"topology_strategy,omitempty"`
}

// Probe configures the per-bundle probe.
type Probe struct {
	// UseGPUs makes the probe task take a GPU fraction in bundles that hold
	// GPUs, so the bundle's GPU id is reported.
	UseGPUs bool `json:"use_gpus"`
	// PortRangeLow and PortRangeHigh bound the probed port, half-open.
	PortRangeLow  int `json:"port_range_low"`
	PortRangeHigh int `json:"port_range_high"`
	// Topology is where the probe reads each node's domain and rank.
	Topology clusterspec.TopologySource `json:"topology"`
	// KeepRecorded has an inspect keep each bundle as the cluster's record
	// in Ray's KV holds it while Ray still has it on the recorded node (and
	// every bundle of a group Ray is placing again): only the others are
	// probed, since running workers may hold the GPU a probe task needs.
	// The record, not the request, carries them: a request is one argument
	// of the job's command line.
	KeepRecorded bool `json:"keep_recorded,omitempty"`
}

// Contract holds the constants of the contract that driver.py uses.
type Contract struct {
	DomainPrefix        string `json:"domain_prefix"`
	DomainUnknown       string `json:"domain_unknown"`
	TopoRankKey         string `json:"topo_rank_key"`
	TopoRankUnknown     int    `json:"topo_rank_unknown"`
	StateCreated        string `json:"state_created"`
	StateRemoved        string `json:"state_removed"`
	StateMissing        string `json:"state_missing"`
	GroupResourceMarker string `json:"group_resource_marker"`
	PortTries           int    `json:"port_tries"`
	PortRounds          int    `json:"port_rounds"`
	ProbeBatch          int    `json:"probe_batch"`
	MinProbeSeconds     int    `json:"min_probe_seconds"`
	RemoveWaitSeconds   int    `json:"remove_wait_seconds"`
	RankLabelDigits     int    `json:"rank_label_digits"`
	// AmountUnit is Ray's resource amount resolution (SameAmount).
	AmountUnit float64 `json:"amount_unit"`
	// MaxRecreates bounds how often a create makes a group again that was
	// removed while it waited; MaxRemovalsPerName how often a delete removes
	// a name that keeps coming back.
	MaxRecreates       int `json:"max_recreates"`
	MaxRemovalsPerName int `json:"max_removals_per_name"`
	// MinRemoveWaitSeconds is the least a delete waits for one group's
	// removal; GCSCallSeconds bounds one direct GCS call; ProbeGPUFraction is
	// the GPU share a probe task takes to learn its bundle's GPU id.
	MinRemoveWaitSeconds int     `json:"min_remove_wait_seconds"`
	GCSCallSeconds       int     `json:"gcs_call_seconds"`
	ProbeGPUFraction     float64 `json:"probe_gpu_fraction"`
	// TakeoverSeconds is the age at which a stale claim's takeover key
	// counts as left by a killed run.
	TakeoverSeconds int `json:"takeover_seconds"`
	// LockWaitSeconds, PendingWaitSeconds and PlaceWaitSeconds bound the
	// waits of a reservation (the lock; pending reservations, for a cluster
	// Ray places; Ray's placement of such a cluster, without the lock).
	LockWaitSeconds    int `json:"lock_wait_seconds"`
	PendingWaitSeconds int `json:"pending_wait_seconds"`
	PlaceWaitSeconds   int `json:"place_wait_seconds"`
	// GatherSeconds bounds how long a wave's creates gather for a hold.
	GatherSeconds int `json:"gather_seconds"`
	// RetrySeconds is the pause between the holds of a create that waits
	// for another's pending reservation.
	RetrySeconds float64 `json:"retry_seconds"`
}

// NewRequest builds a complete request for groups (names only are needed
// for delete and inspect).
func NewRequest(action, namespace string, groups []clusterspec.GroupRequest, useGPUs bool, ports topology.PortRange, ready time.Duration) Request {
	if namespace == "" {
		namespace = clusterspec.DefaultNamespace
	}
	if ready <= 0 {
		ready = clusterspec.DefaultReadyTimeout
	}
	if ports.Low == 0 {
		ports.Low = clusterspec.DefaultPorts.Low
	}
	if ports.High == 0 {
		ports.High = clusterspec.DefaultPorts.High
	}
	req := Request{
		Version:             RequestVersion,
		Action:              action,
		Namespace:           namespace,
		ReadyTimeoutSeconds: int(math.Max(1, math.Ceil(ready.Seconds()))),
		Probe:               Probe{UseGPUs: useGPUs, PortRangeLow: ports.Low, PortRangeHigh: ports.High},
		Contract:            DriverContract(),
		Groups:              make([]RequestGroup, 0, len(groups)),
	}
	for _, g := range groups {
		strategy := g.Strategy
		if strategy == "" {
			strategy = clusterspec.PerNodeStrategy
		}
		bundles := make([]map[string]float64, len(g.Bundles))
		for i, b := range g.Bundles {
			bundles[i] = b
		}
		req.Groups = append(req.Groups, RequestGroup{Name: g.Name, Strategy: strategy, Bundles: bundles})
	}
	return req
}

// namedGroups are groups known by name only (delete, read).
func namedGroups(names []string) []clusterspec.GroupRequest {
	groups := make([]clusterspec.GroupRequest, len(names))
	for i, n := range names {
		groups[i] = clusterspec.GroupRequest{Name: n}
	}
	return groups
}

// Request is the driver request that runs action on the spec's groups,
// with node pins and node_label_selectors as bundle label selectors and
// topology_strategy on the unified group.
func RequestFor(s clusterspec.Spec, action string) Request {
	s = s.WithDefaults()
	groups := s.Groups()
	req := NewRequest(action, s.Namespace, groups, s.UseGPUs, s.Ports, s.ReadyTimeout)
	req.Probe.Topology = s.Topology
	if s.SortsByTopology() {
		req.RankOrder = &RankOrder{SegmentSize: s.SegmentSize, GPUsPerNode: s.NumGPUsPerNode}
	}
	for i, g := range groups {
		req.Groups[i].BundleLabelSelector = s.BundleSelectors(g)
		req.Groups[i].TopologyStrategy = s.GroupTopologyStrategy(g)
	}
	return req
}

// Validate checks that the request is complete and well-formed before it is
// submitted: the driver trusts it. Spec.Validate holds the user-facing rules.
func (r Request) Validate() error {
	if r.Version != RequestVersion {
		return fmt.Errorf("driver request: version %d, want %d; build requests with contract.NewRequest", r.Version, RequestVersion)
	}
	if err := r.validateAction(); err != nil {
		return err
	}
	if err := r.validateOwnership(); err != nil {
		return err
	}
	if r.Namespace == "" {
		return errors.New("driver request: empty namespace")
	}
	if len(r.Groups) == 0 && r.Action != ActionRead && r.Action != ActionBatch && r.Action != ActionQuota {
		return errors.New("driver request: no groups")
	}
	if r.ReadyTimeoutSeconds < 1 {
		return errors.New("driver request: ready_timeout_seconds must be positive")
	}
	ports := topology.PortRange{Low: r.Probe.PortRangeLow, High: r.Probe.PortRangeHigh}
	if err := ports.Validate(); err != nil {
		return fmt.Errorf("driver request: port range %s: %w", ports, err)
	}
	if r.Probe.KeepRecorded && (r.Action != ActionInspect || r.Ownership == nil) {
		return errors.New("driver request: probe.keep_recorded is for an inspect of an owned cluster")
	}
	if issues := r.Probe.Topology.Validate("probe.topology"); len(issues) > 0 {
		return fmt.Errorf("driver request: %s", issues[0].Detail)
	}
	if r.Contract != DriverContract() {
		return errors.New("driver request: contract constants missing or altered; build requests with contract.NewRequest")
	}
	if o := r.RankOrder; o != nil && (o.GPUsPerNode < 1 || (o.SegmentSize != nil && *o.SegmentSize < 1)) {
		return errors.New("driver request: rank_order needs gpus_per_node >= 1 and segment_size >= 1 when set")
	}
	if r.Action == ActionResize && (r.Ownership == nil || r.Ownership.Manifest == nil) {
		return errors.New("driver request: resize without its ownership and manifest")
	}
	if len(r.RemoveGroups) > 0 && r.Action != ActionResize {
		return errors.New("driver request: remove_groups is for a resize")
	}
	if err := r.validateAlternatives(); err != nil {
		return err
	}
	if len(r.RunID) > maxRunIDLength {
		return fmt.Errorf("driver request: run_id longer than %d characters", maxRunIDLength)
	}
	return r.validateGroups()
}

// validateAction checks the action is known, and that only a batch request
// holds a batch (and a valid one).
func (r Request) validateAction() error {
	switch r.Action {
	case ActionCreate, ActionDelete, ActionInspect, ActionRecord, ActionRead, ActionQuota, ActionResize:
		if len(r.Batch) > 0 {
			return fmt.Errorf("driver request: a %s request holds no batch", r.Action)
		}
	case ActionBatch:
		if err := r.validateBatch(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("driver request: unknown action %q (want %s, %s, %s, %s, %s, %s, %s or %s)", r.Action, ActionCreate, ActionDelete, ActionInspect, ActionRecord, ActionRead, ActionQuota, ActionResize, ActionBatch)
	}
	return nil
}

// validateOwnership checks the ownership block: complete when present, with
// a manifest for a record, and present for a record or a read.
func (r Request) validateOwnership() error {
	if o := r.Ownership; o != nil {
		listing := r.Action == ActionRead && o.ListReservations != ""
		if o.KVNamespace == "" || !listing && (o.Key == "" || o.TombstoneKey == "") {
			return errors.New("driver request: ownership without its KV namespace and keys")
		}
		if r.Action == ActionRecord && o.Manifest == nil {
			return errors.New("driver request: record without a manifest")
		}
	} else if r.Action == ActionRecord || r.Action == ActionRead && (r.Quota == nil || !r.Quota.Usage) {
		return fmt.Errorf("driver request: %s without ownership", r.Action)
	}
	if r.Action == ActionQuota && (r.Quota == nil || r.Quota.Key == "" || r.Quota.Owner == "") {
		return errors.New("driver request: quota without its key and owner; build it with contract.QuotaWriteRequest")
	}
	return nil
}

// validateGroups checks every group has a distinct non-empty name and, for a
// create, a valid shape.
func (r Request) validateGroups() error {
	seen := make(map[string]bool, len(r.Groups))
	for i, g := range r.Groups {
		if strings.TrimSpace(g.Name) == "" {
			return fmt.Errorf("driver request: groups[%d] has an empty name", i)
		}
		if seen[g.Name] {
			return fmt.Errorf("driver request: group name %q is listed twice", g.Name)
		}
		seen[g.Name] = true
		if r.Action != ActionCreate && r.Action != ActionResize {
			continue
		}
		if err := g.validateForCreate(); err != nil {
			return err
		}
	}
	for _, name := range r.RemoveGroups {
		if seen[name] {
			return fmt.Errorf("driver request: group %q is both kept and removed", name)
		}
	}
	return nil
}

// validateForCreate checks what creating g needs: a valid strategy, bundles
// that each request some valid resources, one label selector per bundle, and
// a topology_strategy that agrees with the strategy.
func (g RequestGroup) validateForCreate() error {
	if err := topology.CheckStrategy(g.Strategy); err != nil {
		return fmt.Errorf("driver request: group %q: %w", g.Name, err)
	}
	if len(g.Bundles) == 0 {
		return fmt.Errorf("driver request: group %q has no bundles", g.Name)
	}
	if g.BundleLabelSelector != nil && len(g.BundleLabelSelector) != len(g.Bundles) {
		return fmt.Errorf("driver request: group %q has %d label selectors for %d bundles", g.Name, len(g.BundleLabelSelector), len(g.Bundles))
	}
	if g.TopologyStrategy != nil && g.TopologyStrategy[clusterspec.NodeIDLabel] != g.Strategy {
		return fmt.Errorf("driver request: group %q: topology_strategy must carry the group's strategy under %s", g.Name, clusterspec.NodeIDLabel)
	}
	for j, b := range g.Bundles {
		positive := false
		for k, v := range b {
			if k == "" || v < 0 || math.IsNaN(v) || v > maxResourceAmount {
				return fmt.Errorf("driver request: group %q bundle %d: invalid resource %q = %v", g.Name, j, k, v)
			}
			positive = positive || v > 0
		}
		if !positive {
			return fmt.Errorf("driver request: group %q bundle %d requests no resources", g.Name, j)
		}
	}
	return nil
}

// Result is the driver's final report.
type Result struct {
	OK     bool         `json:"ok"`
	Action string       `json:"action"`
	Error  *ResultError `json:"error"`
	// Groups is set for create and inspect (in request order) when OK.
	Groups []GroupResult `json:"groups"`
	// Removed lists groups removed by this run: by delete, or, on a failed
	// create, the groups the run had created and removed again.
	Removed []string `json:"removed"`
	// Missing lists named groups that do not exist (delete, inspect and read).
	Missing []string `json:"missing"`
	// NotRemoved lists groups a resize was to remove but could not; the
	// resize stands (its record and reservation hold the new shape).
	NotRemoved []string `json:"not_removed,omitempty"`
	// Committed is set on a resize that failed (e.g. was stopped) after it
	// wrote the new shape's record: the resize stands, Groups and Record
	// hold the new shape and NotRemoved the groups it may have left.
	Committed bool `json:"committed,omitempty"`
	// Alternative is the 1-based index of the request's Alternatives a
	// create took (its first choice was reserved first); 0 for the first.
	Alternative int `json:"alternative,omitempty"`
	// Pending lists the groups Ray had not placed when a create gave up;
	// Nodes is the cluster's per-node view at that moment. Go explains the
	// shortage from both (ExplainApplyShortage).
	Pending []string   `json:"pending,omitempty"`
	Nodes   []NodeView `json:"nodes,omitempty"`
	// Reservations is what a ReservationsRequest read.
	Reservations []ListedReservation `json:"reservations,omitempty"`
	// Quota is the namespace's quota a QuotaWriteRequest wrote or a
	// QuotaUsageRequest read (nil: none), QuotaUsage what each holder
	// holds there, in all and on each node (QuotaUsageRequest).
	Quota      *QuotaValue   `json:"quota,omitempty"`
	QuotaUsage []QuotaHolder `json:"quota_usage,omitempty"`
	// Record is the cluster's record after the run (nil when none), and
	// Tombstone what a delete left (inspect).
	Record    *record.Manifest  `json:"record,omitempty"`
	Tombstone *record.Tombstone `json:"tombstone,omitempty"`
	// OtherOwner is set when delete left the groups alone because their
	// record names another owner; PreviousOwner when an import claimed a
	// cluster from another owner (or from groups without a record).
	OtherOwner    *record.OtherOwner `json:"other_owner,omitempty"`
	PreviousOwner *record.OtherOwner `json:"previous_owner,omitempty"`
	RayVersion    string             `json:"ray_version"`
	// RunID echoes Request.RunID.
	RunID string `json:"run_id,omitempty"`
	// Batch holds the result of each request of an ActionBatch, in order.
	Batch []Result `json:"batch,omitempty"`
}

// ResultError is the driver's error report: a kind, and a code with the
// facts Go words the message from (Describe; Result.WordError fills
// Message).
type ResultError struct {
	Kind    string     `json:"kind"`
	Code    string     `json:"code,omitempty"`
	Facts   ErrorFacts `json:"facts"`
	Message string     `json:"message,omitempty"`
}

// WordError fills the message of a failed result from its code and facts.
func (r *Result) WordError() {
	if r == nil {
		return
	}
	if !r.OK && r.Error == nil {
		r.Error = &ResultError{Kind: KindInternal, Message: "driver reported failure without an error"}
	}
	if r.Error != nil && r.Error.Message == "" {
		r.Error.Message = r.Error.Describe(r.Removed)
	}
	for i := range r.Batch {
		r.Batch[i].WordError()
	}
}

// NodeView is one alive node's resources as the driver saw them.
type NodeView struct {
	NodeID string             `json:"node_id"`
	NodeIP string             `json:"node_ip"`
	Total  map[string]float64 `json:"total"`
	Free   map[string]float64 `json:"free"`
}

// GroupResult describes one placement group.
type GroupResult struct {
	Name string `json:"name"`
	// ID is the hex placement group id ("" when missing).
	ID string `json:"id"`
	// State is Ray's state (CREATED, PENDING, ...) or StateMissing.
	State    string `json:"state"`
	Strategy string `json:"strategy"`
	// Created is true when this run created the group (false when adopted
	// or inspected).
	Created bool           `json:"created"`
	Missing bool           `json:"missing"`
	Bundles []BundleResult `json:"bundles"`
}

// BundleResult describes one bundle. Node fields come from the probe task
// (or, for groups that are not CREATED, from Ray's placement table, in which
// case Port is 0 and GPUID nil).
type BundleResult struct {
	Index     int                `json:"index"`
	Resources map[string]float64 `json:"resources"`
	NodeID    string             `json:"node_id"`
	NodeIP    string             `json:"node_ip"`
	// GPUID is the bundle's GPU id, nil without GPUs (or use_gpus false).
	GPUID *int `json:"gpu_id"`
	// NVLinkDomain is the node's NVLink domain resource, or the unknown domain.
	NVLinkDomain string `json:"nvlink_domain"`
	// TopoRank is the node's topo_rank resource, or TopoRankUnknown.
	TopoRank int `json:"topo_rank"`
	// Port is a free TCP port on the node, unique per node IP in this result.
	Port int `json:"port"`
}

// DriverError is the Go form of a driver result with ok=false.
type DriverError struct {
	Kind    string
	Code    string // ResultError.Code: what Fix reads
	Message string
}

func (e *DriverError) Error() string {
	return fmt.Sprintf("ray placement group driver: %s: %s", e.Kind, e.Message)
}

// IsKind reports whether err is a *DriverError of one of kinds.
func IsKind(err error, kinds ...string) bool {
	var de *DriverError
	return errors.As(err, &de) && slices.Contains(kinds, de.Kind)
}

// Err returns the driver's failure as a *DriverError, or nil when OK.
func (r *Result) Err() error {
	if r == nil || r.OK {
		return nil
	}
	e := &DriverError{Kind: KindInternal, Message: "driver reported failure without an error"}
	if r.Error != nil {
		e.Kind, e.Code, e.Message = r.Error.Kind, r.Error.Code, r.Error.Message
	}
	return e
}

// MissingGroups lists the groups an inspect found missing.
func (r *Result) MissingGroups() []string {
	var out []string
	for _, g := range r.Groups {
		if g.Missing {
			out = append(out, g.Name)
		}
	}
	return out
}

// Writes reports whether running r may change anything in Ray: groups,
// the record, the tombstone or node claims. Only an inspect without a
// record to write and a read leave Ray as they found it; a batch writes
// when any of its requests does.
func (r Request) Writes() bool {
	switch r.Action {
	case ActionRead:
		return false
	case ActionInspect:
		o := r.Ownership
		return o != nil && (o.Claim || o.Manifest != nil)
	case ActionBatch:
		return slices.ContainsFunc(r.Batch, Request.Writes)
	}
	return true
}
