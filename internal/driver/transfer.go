package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// A transfer note tells the state a cluster was imported from, at its next
// plan, that another state owns the cluster now. Ownership lives in the
// cluster's record in Ray's KV, which only a job can read (the dashboard
// serves no KV), and a job per plan would cost seconds. The dashboard does
// serve job records, so an import that takes a cluster from another state
// submits one trivial job whose metadata names both owners, under an id made
// from the cluster's namespace and name: a plan reads it with one GET, which
// finds nothing (404) for every cluster never taken, or, planning many
// clusters, all notes with one list of Ray's jobs (ReadTransfers). There is at most one
// note per cluster; the owner's delete removes it. A later transfer (A to B,
// then B to C, or B importing again) keeps the earlier owners in the note, so
// A is still warned.
const (
	metaTransferCluster = "raytf_transfer_cluster"
	metaTransferFrom    = "raytf_transfer_from"
	metaTransferTo      = "raytf_transfer_to"
	metaTransferAt      = "raytf_transfer_at"
	metaTransferEarlier = "raytf_transfer_earlier"
	// transferEntrypoint does nothing: the note is the record, not the job.
	transferEntrypoint = "true"
	// maxEarlierOwners bounds the note's metadata; older owners drop out.
	maxEarlierOwners = 8
	// writeBackWait is how long a stopped note's job may take to write its
	// record back after the delete (Ray's job monitor ends after the stop).
	writeBackWait = 1500 * time.Millisecond
)

// Transfer is one import's taking of a cluster from another state.
type Transfer struct {
	Namespace, Name string
	// From and To are the former and the new owner: the note keeps only
	// their digests (record.StoredOwner), job records being readable by all.
	From, To string
	// Earlier are the owners before From, newest first (earlier transfers).
	Earlier []string
	At      time.Time
}

// TakenFrom tells whether the state of owner token owner held the cluster
// before this transfer or an earlier one and does not hold it now: its
// state is the one to warn. Notes of older versions hold plain tokens.
func (t Transfer) TakenFrom(owner string) bool {
	if owner == "" || record.OwnedBy(t.To, owner) {
		return false
	}
	return record.OwnedBy(t.From, owner) || slices.ContainsFunc(t.Earlier, func(o string) bool { return record.OwnedBy(o, owner) })
}

// digested is t with only digests of its owners.
func (t Transfer) digested() Transfer {
	t.From, t.To = record.StoredOwner(t.From), record.StoredOwner(t.To)
	earlier := make([]string, len(t.Earlier))
	for i, o := range t.Earlier {
		earlier[i] = record.StoredOwner(o)
	}
	t.Earlier = earlier
	return t
}

// carryEarlier adds the owners of the note t replaces to t.Earlier, leaving
// out the new owner (a cluster imported back is its own again).
func (t *Transfer) carryEarlier(old *Transfer) {
	if old == nil {
		return
	}
	for _, o := range append([]string{old.From}, old.Earlier...) {
		if o != "" && o != t.To && o != t.From && !slices.Contains(t.Earlier, o) && len(t.Earlier) < maxEarlierOwners {
			t.Earlier = append(t.Earlier, o)
		}
	}
}

// transferPrefix begins every ownership note's submission id.
const transferPrefix = "raytf_owner_"

// TransferID is the submission id of the note of the cluster name in
// namespace: the name for people reading the dashboard, a hash of both to
// keep ids of different clusters apart.
func TransferID(namespace, name string) string {
	return noteID(transferPrefix, name, namespace+"/"+name)
}

// noteID is a note's submission id: prefix, then shown (slugged, cut to 60)
// for people reading the dashboard, then a hash of key that keeps the notes
// of different keys apart.
func noteID(prefix, shown, key string) string {
	sum := sha256.Sum256([]byte(key))
	slug := slugOf(shown)
	if len(slug) > 60 {
		slug = slug[:60]
	}
	return prefix + slug + "_" + hex.EncodeToString(sum[:8])
}

// RecordTransfer leaves the note of t, replacing an earlier transfer's and
// keeping its owners in t.Earlier.
func RecordTransfer(ctx context.Context, api JobAPI, t Transfer) error {
	if err := refuseWrite(ctx, "ownership note"); err != nil {
		return err
	}
	id := TransferID(t.Namespace, t.Name)
	t = t.digested()
	if old, err := ReadTransfer(ctx, api, t.Namespace, t.Name); err == nil && old != nil {
		o := old.digested()
		t.carryEarlier(&o)
	}
	return leaveNote(ctx, api, id, map[string]string{
		metaCreatedBy:       createdBy,
		metaTransferCluster: t.Namespace + "/" + t.Name,
		metaTransferFrom:    t.From,
		metaTransferTo:      t.To,
		metaTransferEarlier: strings.Join(t.Earlier, ","),
		metaTransferAt:      t.At.UTC().Format(time.RFC3339),
	})
}

// leaveNote submits the trivial job whose record, under id, holds metadata
// (a transfer or quota note), replacing the note there.
func leaveNote(ctx context.Context, api JobAPI, id string, metadata map[string]string) error {
	req := rayclient.JobSubmitRequest{Entrypoint: transferEntrypoint, SubmissionID: id, Metadata: metadata}
	var err error
	for attempt := 0; attempt < 2; attempt++ { // a stopped note's record written back after the delete takes one more
		if err = removeNote(ctx, api, id); err != nil {
			return fmt.Errorf("replacing the note %q: %w", id, err)
		}
		if _, err = api.SubmitJob(ctx, req); err == nil {
			untrackRecord(id) // the live note stays: no hand-off may delete it
			return nil
		}
	}
	return fmt.Errorf("leaving the note %q: %w", id, err)
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
	t := transferOf(*job, namespace, name)
	if t == nil {
		return nil, errors.New("job " + job.SubmissionID + " is not this provider's ownership note")
	}
	return t, nil
}

// Transfers are the ownership notes one list of Ray's jobs found.
type Transfers map[string]rayclient.JobDetails // by TransferID

// ReadTransfers returns every ownership note in Ray from one list of its
// jobs: one request for a plan of many clusters, where ReadTransfer costs
// one each.
func ReadTransfers(ctx context.Context, api JobAPI) (Transfers, error) {
	jobs, err := api.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	notes := Transfers{}
	for _, job := range jobs {
		if strings.HasPrefix(job.SubmissionID, transferPrefix) {
			notes[job.SubmissionID] = job
		}
	}
	return notes, nil
}

// Of is the note of the cluster name in namespace, nil when there is none
// (as ReadTransfer's).
func (ts Transfers) Of(namespace, name string) *Transfer {
	job, ok := ts[TransferID(namespace, name)]
	if !ok {
		return nil
	}
	return transferOf(job, namespace, name)
}

// transferOf reads the note of the cluster name in namespace from a job's
// metadata: nil when the job holds no such note.
func transferOf(job rayclient.JobDetails, namespace, name string) *Transfer {
	md := job.Metadata
	if md[metaTransferCluster] != namespace+"/"+name || md[metaTransferTo] == "" {
		return nil
	}
	at, _ := time.Parse(time.RFC3339, md[metaTransferAt])
	var earlier []string
	if e := md[metaTransferEarlier]; e != "" {
		earlier = strings.Split(e, ",")
	}
	return &Transfer{Namespace: namespace, Name: name, From: md[metaTransferFrom], To: md[metaTransferTo], Earlier: earlier, At: at}
}

// DeleteTransfer removes the note of a deleted cluster. Its error is only
// worth a log line: a note left behind warns a state that no longer has the
// cluster, and the next import of the name replaces it.
func DeleteTransfer(ctx context.Context, api JobAPI, namespace, name string) error {
	if err := refuseWrite(ctx, "removal of an ownership note"); err != nil {
		return err
	}
	return removeNote(ctx, api, TransferID(namespace, name))
}

// removeNote deletes the note id, even when the command is being cancelled
// (the cluster's own change is done by then). Ray deletes only finished jobs,
// and a note's job may still be starting when a second import or the delete
// comes seconds after the first, so a running one is stopped first; its
// monitor may then write the record back once, which a second pass removes.
func removeNote(ctx context.Context, api JobAPI, id string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	stopped, err := deleteStopping(ctx, api, id)
	if err != nil || !stopped {
		return err
	}
	// Ray has written a stopped note's record back even after writeBackWait;
	// the process's hand-off looks once more after it exits (and deletes
	// only a written-back copy, never a live note).
	trackRecord(api, id)
	if !sleepCtx(ctx, writeBackWait) { // the stopped job's monitor may write its record back
		return nil
	}
	_, err = deleteStopping(ctx, api, id)
	return err
}

// deleteStopping deletes job id, stopping it first while it runs (Ray
// deletes only finished jobs); stopped says it had to.
func deleteStopping(ctx context.Context, api JobAPI, id string) (stopped bool, err error) {
	for {
		_, err := api.DeleteJob(ctx, id)
		if err == nil || rayclient.IsNotFound(err) {
			return stopped, nil
		}
		if _, serr := api.StopJob(ctx, id); rayclient.IsNotFound(serr) {
			return stopped, nil
		}
		stopped = true
		if !sleepCtx(ctx, 200*time.Millisecond) {
			return stopped, err
		}
		if _, gerr := api.GetJob(ctx, id); rayclient.IsNotFound(gerr) {
			return stopped, nil
		}
	}
}

// isNote tells a note (transfer or quota) from the records of driver jobs, which Run
// deletes once they are old.
func isNote(j *rayclient.JobDetails) bool {
	return j.Metadata[metaTransferTo] != "" || j.Metadata[metaQuotaNamespace] != ""
}
