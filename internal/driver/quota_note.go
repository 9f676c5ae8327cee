package driver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// A quota note tells every plan, with one GET, whether a Ray namespace has
// a quota and what it is. The quota itself lives in Ray's KV, where a
// create checks it under the reservation lock, but only a job can read the
// KV; ray_namespace_quota's apply leaves this job record beside it, as an
// import leaves a transfer note (transfer.go).
const (
	quotaPrefix        = "raytf_quota_"
	metaQuotaNamespace = "raytf_quota_namespace"
	metaQuotaOwner     = "raytf_quota_owner"
	metaQuotaLimits    = "raytf_quota_limits"
	// Absent from notes of quotas without label limits (and of older versions).
	metaQuotaLabelLimits = "raytf_quota_label_limits"
)

// QuotaNote is a namespace's quota as its note tells it.
type QuotaNote struct {
	Namespace string
	// Owner is the owner_id of the ray_namespace_quota that declared it: the
	// note keeps its digest (older notes: the token).
	Owner string
	contract.QuotaCaps
}

// QuotaNoteID is the submission id of the note of Ray namespace ns.
func QuotaNoteID(ns string) string { return noteID(quotaPrefix, ns, ns) }

// RecordQuotaNote leaves (or replaces) the note of q.
func RecordQuotaNote(ctx context.Context, api JobAPI, q QuotaNote) error {
	if err := refuseWrite(ctx, "quota note"); err != nil {
		return err
	}
	limits, err := json.Marshal(q.Limits)
	if err != nil {
		return err
	}
	md := map[string]string{metaCreatedBy: createdBy, metaQuotaNamespace: q.Namespace, metaQuotaOwner: record.StoredOwner(q.Owner), metaQuotaLimits: string(limits)}
	if len(q.LabelLimits) > 0 {
		labelLimits, err := json.Marshal(q.LabelLimits)
		if err != nil {
			return err
		}
		md[metaQuotaLabelLimits] = string(labelLimits)
	}
	return leaveNote(ctx, api, QuotaNoteID(q.Namespace), md)
}

// ReadQuotaNote returns the quota of Ray namespace ns, nil when it has none.
func ReadQuotaNote(ctx context.Context, api JobAPI, ns string) (*QuotaNote, error) {
	job, err := api.GetJob(ctx, QuotaNoteID(ns))
	if rayclient.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	md := job.Metadata
	q := &QuotaNote{Namespace: md[metaQuotaNamespace], Owner: md[metaQuotaOwner]}
	bad := q.Namespace != ns || json.Unmarshal([]byte(md[metaQuotaLimits]), &q.Limits) != nil
	if labelLimits, ok := md[metaQuotaLabelLimits]; ok && !bad {
		bad = json.Unmarshal([]byte(labelLimits), &q.LabelLimits) != nil
	}
	if bad {
		return nil, fmt.Errorf("job %s is not this provider's quota note", job.SubmissionID)
	}
	return q, nil
}

// DeleteQuotaNote removes the note of Ray namespace ns.
func DeleteQuotaNote(ctx context.Context, api JobAPI, ns string) error {
	if err := refuseWrite(ctx, "removal of a quota note"); err != nil {
		return err
	}
	return removeNote(ctx, api, QuotaNoteID(ns))
}
