package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// A transfer note tells the state a cluster was imported from, at its next
// plan, that another state owns the cluster now. Ownership lives in the
// cluster's record in Ray's KV, which only a job can read (the dashboard
// serves no KV), and a job per plan would cost seconds. The dashboard does
// serve job records, so an import that takes a cluster from another state
// submits one trivial job whose metadata names both owners, under an id made
// from the cluster's namespace and name: a plan reads it with one GET, which
// finds nothing (404) for every cluster never taken. There is at most one
// note per cluster; the owner's delete removes it.
const (
	metaTransferCluster = "raytf_transfer_cluster"
	metaTransferFrom    = "raytf_transfer_from"
	metaTransferTo      = "raytf_transfer_to"
	metaTransferAt      = "raytf_transfer_at"
	// transferEntrypoint does nothing: the note is the record, not the job.
	transferEntrypoint = "true"
)

// Transfer is one import's taking of a cluster from another state.
type Transfer struct {
	Namespace, Name string
	From, To        string // owner tokens (owner_id) of the former and the new owner
	At              time.Time
}

// TransferID is the submission id of the note of the cluster name in
// namespace: the name for people reading the dashboard, a hash of both to
// keep ids of different clusters apart.
func TransferID(namespace, name string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	slug := slugOf(name)
	if len(slug) > 60 {
		slug = slug[:60]
	}
	return "raytf_owner_" + slug + "_" + hex.EncodeToString(sum[:8])
}

// RecordTransfer leaves the note of t, replacing an earlier transfer's.
func RecordTransfer(ctx context.Context, api JobAPI, t Transfer) error {
	id := TransferID(t.Namespace, t.Name)
	if err := removeNote(ctx, api, id); err != nil {
		return fmt.Errorf("replacing the ownership note %q: %w", id, err)
	}
	_, err := api.SubmitJob(ctx, rayclient.JobSubmitRequest{
		Entrypoint:   transferEntrypoint,
		SubmissionID: id,
		Metadata: map[string]string{
			metaCreatedBy:       createdBy,
			metaTransferCluster: t.Namespace + "/" + t.Name,
			metaTransferFrom:    t.From,
			metaTransferTo:      t.To,
			metaTransferAt:      t.At.UTC().Format(time.RFC3339),
		},
	})
	if err != nil {
		return fmt.Errorf("leaving the ownership note %q: %w", id, err)
	}
	return nil
}

// ReadTransfer returns the note of the cluster name in namespace, nil when
// it was never taken from a state.
func ReadTransfer(ctx context.Context, api JobAPI, namespace, name string) (*Transfer, error) {
	job, err := api.GetJob(ctx, TransferID(namespace, name))
	if rayclient.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	md := job.Metadata
	if md[metaTransferCluster] != namespace+"/"+name || md[metaTransferTo] == "" {
		return nil, errors.New("job " + job.SubmissionID + " is not this provider's ownership note")
	}
	at, _ := time.Parse(time.RFC3339, md[metaTransferAt])
	return &Transfer{Namespace: namespace, Name: name, From: md[metaTransferFrom], To: md[metaTransferTo], At: at}, nil
}

// DeleteTransfer removes the note of a deleted cluster, best effort: a note
// left behind only warns a state that no longer has the cluster.
func DeleteTransfer(ctx context.Context, api JobAPI, namespace, name string) {
	_ = removeNote(ctx, api, TransferID(namespace, name))
}

// removeNote deletes the note id. Ray deletes only finished jobs, and a
// note's job may still be starting when a second import or the delete comes
// seconds after the first, so a running one is stopped first.
func removeNote(ctx context.Context, api JobAPI, id string) error {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	for {
		_, err := api.DeleteJob(ctx, id)
		if err == nil || rayclient.IsNotFound(err) {
			return nil
		}
		if _, serr := api.StopJob(ctx, id); rayclient.IsNotFound(serr) {
			return nil
		}
		if !sleepCtx(ctx, 200*time.Millisecond) {
			return err
		}
		if _, gerr := api.GetJob(ctx, id); rayclient.IsNotFound(gerr) {
			return nil
		}
	}
}

// isTransferNote tells a note from the records of driver jobs, which Run
// deletes once they are old.
func isTransferNote(j *rayclient.JobDetails) bool {
	return j.Metadata[metaTransferTo] != ""
}
