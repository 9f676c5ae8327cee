package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// The driver reports a failure as facts (ResultError.Code and Facts); Go
// writes every sentence a user reads from them (Describe).

// Codes of ResultError.
const (
	CodeNoRequest           = "no_request"
	CodeUndecodable         = "undecodable"
	CodeRequestField        = "request_field"
	CodeRequestVersion      = "request_version"
	CodeGroupsExist         = "groups_exist"
	CodeGroupsDiffer        = "groups_differ"
	CodeTakenOver           = "taken_over"
	CodeRecordTaken         = "record_taken"
	CodeReplacedDuringWait  = "replaced_during_wait"
	CodeCreatedConcurrently = "created_concurrently"
	CodeNodesClaimed        = "nodes_claimed"
	CodeQuotaExceeded       = "quota_exceeded"
	CodeQuotaTaken          = "quota_taken"
	CodeNotReady            = "not_ready"
	CodeNotRemoved          = "not_removed"
	CodeProbeTimeout        = "probe_timeout"
	CodeProbeFailed         = "probe_failed"
	CodeNoFreePort          = "no_free_port"
	CodeGCSStatus           = "gcs_status"
	CodeStopped             = "stopped"
	CodeInterrupted         = "interrupted"
	CodeException           = "exception"
)

// ErrorFacts are the values of a driver failure; which are set depends on
// the code.
type ErrorFacts struct {
	Field       string             `json:"field,omitempty"`
	Want        string             `json:"want,omitempty"`
	Detail      string             `json:"detail,omitempty"`
	Type        string             `json:"type,omitempty"`
	Version     int                `json:"version,omitempty"`
	Reads       int                `json:"reads,omitempty"`
	Cluster     string             `json:"cluster,omitempty"`
	Namespace   string             `json:"namespace,omitempty"`
	Key         string             `json:"key,omitempty"`
	Other       *record.OtherOwner `json:"other,omitempty"`
	Group       string             `json:"group,omitempty"`
	Differences []GroupDifference  `json:"differences,omitempty"`
	Groups      []GroupConflict    `json:"groups,omitempty"`
	Late        int                `json:"late,omitempty"`
	Total       int                `json:"total,omitempty"`
	Seconds     float64            `json:"seconds,omitempty"`
	Infeasible  bool               `json:"infeasible,omitempty"`
	Tasks       int                `json:"tasks,omitempty"`
	Low         int                `json:"low,omitempty"`
	High        int                `json:"high,omitempty"`
	Tries       int                `json:"tries,omitempty"`
	Rounds      int                `json:"rounds,omitempty"`
	Status      int                `json:"status,omitempty"`
	Holders     []NodeHolder       `json:"holders,omitempty"`
	Claimed     []NodeHolder       `json:"claimed,omitempty"`
	Signal      int                `json:"signal,omitempty"`
	// Quotas (quota_exceeded, quota_taken).
	Limits       map[string]float64 `json:"limits,omitempty"`
	Ask          map[string]float64 `json:"ask,omitempty"`
	QuotaHolders []QuotaHolder      `json:"quota_holders,omitempty"`
	LabelUse     []LabelUse         `json:"label_use,omitempty"` // the label limits over (quota_exceeded)
	Owner        string             `json:"owner,omitempty"`
}

// NodeHolder is another cluster's share of a node: its reservation there
// (record.ReservationKey), or with no Cluster, placed groups no reservation
// names (clusters older than reservations, or made outside Terraform).
type NodeHolder struct {
	NodeID    string   `json:"node_id"`
	Cluster   string   `json:"cluster"`
	Owner     string   `json:"owner"`
	Groups    []string `json:"groups"`
	ClaimedAt float64  `json:"claimed_at"`
	// Resources is what the reservation holds on the node.
	Resources map[string]float64 `json:"resources,omitempty"`
	// Pending: the reservation's groups are not placed yet, so Ray's free
	// resources do not count it.
	Pending bool `json:"pending,omitempty"`
}

// maxHoldersNamed bounds how many holders a message names.
const maxHoldersNamed = 5

// DescribeHolders names the clusters that hold nodes, each with its groups,
// the state that owns it and its nodes; the largest first, at most
// maxHoldersNamed, then "and N more".
func DescribeHolders(holders []NodeHolder) string {
	byCluster := map[string][]NodeHolder{}
	var order []string
	for _, h := range holders {
		if _, seen := byCluster[h.Cluster]; !seen {
			order = append(order, h.Cluster)
		}
		byCluster[h.Cluster] = append(byCluster[h.Cluster], h)
	}
	slices.SortStableFunc(order, func(a, b string) int { return len(byCluster[b]) - len(byCluster[a]) })
	parts := make([]string, 0, min(len(order), maxHoldersNamed)+1)
	for i, c := range order {
		if i == maxHoldersNamed {
			parts = append(parts, fmt.Sprintf("and %d more cluster(s)", len(order)-i))
			break
		}
		hs := byCluster[c]
		nodes := make([]string, len(hs))
		for j, h := range hs {
			nodes[j] = h.NodeID
		}
		if c == "" {
			var groups []string
			for _, h := range hs {
				groups = append(groups, h.Groups...)
			}
			slices.Sort(groups)
			slices.Sort(nodes)
			parts = append(parts, fmt.Sprintf("placement group(s) %s, which no reservation names, hold node(s) %s",
				strings.Join(quoteAll(slices.Compact(groups)), ", "), strings.Join(slices.Compact(nodes), ", ")))
			continue
		}
		ns, name, _ := strings.Cut(c, "/")
		who := "a state of this provider"
		if hs[0].Owner != "" {
			who = "the state with owner_id " + record.OwnerPrefix(hs[0].Owner) + "…" // never another state's whole token
		}
		parts = append(parts, fmt.Sprintf("cluster %q in namespace %s (%s; groups %s) holds node(s) %s",
			name, ns, who, strings.Join(quoteAll(hs[0].Groups), ", "), strings.Join(nodes, ", ")))
	}
	return strings.Join(parts, "; ")
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strconv.Quote(n)
	}
	return out
}

// GroupConflict is an existing group that differs from the wanted one.
type GroupConflict struct {
	Group       string            `json:"group"`
	Differences []GroupDifference `json:"differences"`
}

// GroupDifference is one way an existing group differs: its strategy, its
// bundle count, one bundle's resources, or its lifetime (not detached).
type GroupDifference struct {
	Field         string             `json:"field"`
	Have          json.RawMessage    `json:"have,omitempty"`
	Want          json.RawMessage    `json:"want,omitempty"`
	Index         int                `json:"index,omitempty"`
	HaveResources map[string]float64 `json:"have_resources,omitempty"`
	WantResources map[string]float64 `json:"want_resources,omitempty"`
}

// Describe words one difference.
func (d GroupDifference) Describe() string {
	raw := func(m json.RawMessage) string {
		var s string
		if json.Unmarshal(m, &s) == nil {
			return s
		}
		return string(m)
	}
	switch d.Field {
	case "strategy":
		return fmt.Sprintf("strategy %s (want %s)", raw(d.Have), raw(d.Want))
	case "bundle_count":
		return fmt.Sprintf("%s bundles (want %s)", raw(d.Have), raw(d.Want))
	case "bundle":
		return fmt.Sprintf("bundle %d %s (want %s)", d.Index, raystate.FormatResources(d.HaveResources), raystate.FormatResources(d.WantResources))
	case "lifetime":
		return "lifetime (existing group is not detached and dies with its creator)"
	}
	return d.Field
}

func describeDifferences(ds []GroupDifference) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Describe()
	}
	return strings.Join(parts, ", ")
}

// describeCreatedBy says who made groups that already exist.
func describeCreatedBy(o *record.OtherOwner) string {
	switch {
	case o == nil || !o.HasRecord:
		return "created outside this provider, no ownership record"
	case o.CreatedAt == "":
		return "created at an unknown time"
	}
	return "created " + o.CreatedAt
}

func describeOther(o *record.OtherOwner) string {
	if o == nil {
		return record.OtherOwner{}.Describe()
	}
	return o.Describe()
}

// Describe words the driver's failure; removed lists the groups the failed
// run created and removed again.
func (e ResultError) Describe(removed []string) string {
	f := e.Facts
	var msg string
	switch e.Code {
	case CodeNoRequest:
		msg = "missing request argument"
	case CodeUndecodable:
		msg = "the request is not base85-encoded zlib-compressed JSON: " + f.Detail
	case CodeRequestField:
		if f.Field == "request" {
			msg = "the request must be a JSON " + f.Want
			break
		}
		msg = fmt.Sprintf("request field %s must be a JSON %s", f.Field, f.Want)
	case CodeRequestVersion:
		msg = fmt.Sprintf("request version %d, this driver reads version %d", f.Version, f.Reads)
	case CodeGroupsExist:
		msg = fmt.Sprintf("placement groups of %q already exist in namespace %s (%s); import it or choose another name",
			f.Cluster, f.Namespace, describeCreatedBy(f.Other))
	case CodeGroupsDiffer:
		parts := make([]string, len(f.Groups))
		for i, g := range f.Groups {
			parts[i] = fmt.Sprintf("group %q exists with different %s", g.Group, describeDifferences(g.Differences))
		}
		msg = strings.Join(parts, "; ")
	case CodeTakenOver:
		msg = fmt.Sprintf("the placement groups of %q in namespace %s now belong to %s; this state leaves them alone",
			f.Cluster, f.Namespace, describeOther(f.Other))
	case CodeRecordTaken:
		msg = fmt.Sprintf("the record %s now belongs to %s; not rewritten", f.Key, describeOther(f.Other))
	case CodeReplacedDuringWait:
		msg = fmt.Sprintf("group %q was replaced during the wait by one with different %s", f.Group, describeDifferences(f.Differences))
	case CodeCreatedConcurrently:
		msg = fmt.Sprintf("group %q was created concurrently by someone else", f.Group)
	case CodeNodesClaimed:
		msg = fmt.Sprintf("the nodes chosen for %s cannot hold it beside what other clusters reserved there: %s", f.Cluster, DescribeHolders(f.Holders))
	case CodeQuotaExceeded:
		msg = quotaExceeded(f)
	case CodeQuotaTaken:
		msg = fmt.Sprintf("Ray namespace %s already has a quota, declared by another state (owner %s…)", f.Namespace, record.OwnerPrefix(f.Owner))
	case CodeNotReady:
		why := "still pending"
		if f.Infeasible {
			why = "Ray marked them infeasible"
		}
		msg = fmt.Sprintf("%d of %d placement group(s) not ready after %ss (%s)", f.Late, f.Total, seconds(f.Seconds), why)
	case CodeNotRemoved:
		msg = fmt.Sprintf("placement group %q not removed after %ss", f.Group, seconds(f.Seconds))
	case CodeProbeTimeout:
		msg = fmt.Sprintf("%d probe task(s) did not finish in time", f.Tasks)
	case CodeProbeFailed:
		msg = "probe task failed: " + f.Detail
	case CodeNoFreePort:
		msg = fmt.Sprintf("could not find a unique free port in [%d, %d) (%d attempts per probe, %d rounds)", f.Low, f.High, f.Tries, f.Rounds)
	case CodeGCSStatus:
		msg = fmt.Sprintf("GCS answered %d: %s", f.Status, f.Detail)
	case CodeStopped:
		msg = fmt.Sprintf("driver stopped by signal %d", f.Signal)
	case CodeInterrupted:
		msg = fmt.Sprintf("driver interrupted (%s)", f.Type)
	case CodeException:
		msg = f.Type + ": " + f.Detail
	default:
		msg = "driver failed (" + e.Code + ")"
	}
	if len(removed) > 0 {
		msg += "; removed group(s) created by this run: " + strings.Join(quoteAll(removed), ", ")
	}
	return msg
}

// AdoptOrRemoveFix is how to adopt, or remove, a cluster another state owns
// or no state holds: a state cannot destroy what it does not own, so removal
// goes through adoption.
const AdoptOrRemoveFix = "To adopt it, `terraform import` it into this configuration, then `terraform apply`: the apply " +
	"makes this state its owner (a destroy right after the import only forgets it). To remove it, adopt it, then " +
	"destroy it (`terraform destroy -target=ray_virtual_cluster.<label>`, or delete its block and apply). " +
	"`terraform query` of the ray_virtual_cluster list resource with ownership = \"other_state\" lists every such " +
	"cluster, with -generate-config-out writing the import blocks. If another state still holds it, manage it there " +
	"instead: importing it here takes it from that state, whose destroy then only forgets it."

// ConflictFix is what to do about groups of the cluster's name that another
// state owns, or that no state does (an apply interrupted before Terraform
// saved state leaves such a cluster).
const ConflictFix = "If no Terraform state holds the existing cluster (an apply interrupted after its create began, before " +
	"Terraform saved state, leaves one), adopt or remove it. " + AdoptOrRemoveFix + " Otherwise choose another name."

// driverFixes says, by code, what a user does about a driver failure. The
// codes absent (a malformed request, the driver's own exception) are the
// provider's bugs.
var driverFixes = map[string]string{
	CodeGroupsExist: ConflictFix,
	CodeGroupsDiffer: "Placement groups of this name exist with another shape: remove them if nothing uses them " +
		"(`ray list placement-groups --detail`, then `ray.util.remove_placement_group`), or choose another name.",
	CodeTakenOver:           takenOverFix,
	CodeRecordTaken:         takenOverFix,
	CodeReplacedDuringWait:  sharedNameFix,
	CodeCreatedConcurrently: sharedNameFix,
	CodeNodesClaimed: "Wait for those clusters and apply again, add nodes, or set capacity_check = \"total\" to queue " +
		"for nodes until ready_timeout.",
	CodeQuotaExceeded: "Ask for less, destroy one of the namespace's clusters, or raise the namespace's ray_namespace_quota, " +
		"then apply again.",
	CodeQuotaTaken: "Keep one ray_namespace_quota per Ray namespace: change that state's, or import it here " +
		"(terraform import ray_namespace_quota.<label> <namespace>).",
	CodeNotReady: "Free the resources Ray lacks (`ray status` shows the pending demands) or ask for fewer bundles or " +
		"GPUs, or raise ready_timeout (and timeouts.create) when the cluster only needs longer, then apply again.",
	CodeNotRemoved: "Check the group with `ray list placement-groups --detail`, then run the same command again; it " +
		"removes what is left.",
	CodeProbeTimeout: "The nodes did not run the probe tasks in time: check them with `ray status`, raise ready_timeout " +
		"if they are only slow, then apply again.",
	CodeProbeFailed: "Check that the nodes run tasks (`ray status`, the job log named above), then apply again.",
	CodeNoFreePort: "Widen port_range_low..port_range_high, or move it to ports nothing else on the nodes uses, then " +
		"apply again.",
	CodeGCSStatus:   "Check the head node's health (`ray status`), then apply again.",
	CodeStopped:     stoppedFix,
	CodeInterrupted: stoppedFix,
}

// Fixes shared by codes of one cause.
const takenOverFix = "Another Terraform state imported this cluster: manage it there, `terraform import` it here and " +
	"`terraform apply` to take it back (then destroy it to remove it), or `terraform state rm` it here."

const sharedNameFix = "Something else manages placement groups of this name: keep one configuration (or script) " +
	"per cluster name, then apply again."

const stoppedFix = "The driver job was stopped (`ray job stop`, or the head node shut it down): apply again, which " +
	"adopts what the job made."

// pythonFix is the fix for a driver that could not start: no Python, or
// one without Ray.
const pythonFix = "The driver job runs the provider's python_executable (default `python`) on the head node, " +
	"which must be the Python that runs Ray there: set python_executable to it (an absolute path, e.g. what " +
	"`python -c 'import ray, sys; print(sys.executable)'` prints on the head node), or set runtime_env_json " +
	"to give the job one, then apply again."

// Fix says what a user does about a failed driver run err: by its code, or
// for a job that never produced a result, what its log shows. It returns
// "" for the provider's own bugs.
func Fix(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	var de *DriverError
	switch {
	case strings.Contains(msg, "No module named 'ray'"), strings.Contains(msg, "exit code 127"),
		strings.Contains(msg, "command not found"):
		return pythonFix
	case errors.As(err, &de):
		return driverFixes[de.Code]
	case strings.Contains(msg, "the driver printed no result"), strings.Contains(msg, "ended with status"):
		return "Read the job log above (`ray job logs <submission id>` shows all of it); when Ray lost the job " +
			"(a head-node restart), apply again, which adopts what the job made."
	}
	return ""
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'g', -1, 64) }

// quotaExceeded words a quota_exceeded: the quota (with the label limits
// the create went over), its holders, the ask, and what is over.
func quotaExceeded(f ErrorFacts) string {
	caps := QuotaCaps{Limits: f.Limits}
	over := QuotaOver(f.Limits, f.QuotaHolders, f.Ask)
	for _, u := range f.LabelUse {
		caps.LabelLimits = append(caps.LabelLimits, u.Limit())
		over = append(over, u.Over()...)
	}
	msg := fmt.Sprintf("Ray namespace %s has quota %s; it holds %s, and %s asks %s", f.Namespace,
		caps.Describe(), DescribeQuotaHolders(f.QuotaHolders), f.Cluster, raystate.FormatResources(f.Ask))
	if len(over) > 0 {
		msg += ": " + strings.Join(over, ", ")
	}
	return msg
}
