//go:build unix

package resources_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// An apply killed mid-create (the CLI and its provider, as a CI runner's end
// kills them) before Terraform saved state leaves a cluster no state holds:
// the driver job goes on and creates it. Each message on the way says what
// to do next, and following them removes the cluster: the next apply names
// it as likely left by an interrupted apply and says how to adopt or remove
// it; a destroy right after an import only forgets it and says why; import,
// apply, then destroy removes it.
func TestAccLifecycle_interruptedApplyLeftover(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("killed")
	removeGroupsAtCleanup(t, name)
	w := acctest.NewWorkDir(t, plainCluster(name).String())

	apply := w.Start("apply", "-auto-approve")
	job := waitForCreateJob(t, name, 2*time.Minute)
	printed := apply.Kill()
	t.Logf("killed the apply once job %s was submitted; it had printed:\n%s", job, printed)
	if status := waitForJobEnd(t, job, 2*time.Minute); status != "SUCCEEDED" {
		t.Fatalf("the create job went on to %s, want SUCCEEDED", status)
	}
	if rec := acctest.ReadRecord(t, name); rec == nil || rec.Owner == "" {
		t.Fatalf("the create job left no record naming an owner: %+v", rec)
	}
	var ids map[string]string
	if err := groupIDs(t, name, &ids)(nil); err != nil {
		t.Fatal(err)
	}
	if out, _ := w.Run("state", "list"); strings.Contains(out, "ray_virtual_cluster.t") {
		t.Skipf("the apply saved state before it was killed: too late a kill for this test\n%s", out)
	}

	out, err := w.Run("apply", "-auto-approve")
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Virtual cluster owned by another Terraform state", "may well be this configuration's own cluster",
		"left by an apply that was interrupted", "`terraform import` it into this configuration, then `terraform apply`",
		"To remove it, adopt it, then destroy it", `ownership = "other_state"`} {
		if err == nil || !strings.Contains(flat, want) {
			t.Errorf("the next apply (err %v) does not say %q:\n%s", err, want, out)
		}
	}

	w.MustRun("import", "ray_virtual_cluster.t", name)
	flat = strings.Join(strings.Fields(w.MustRun("destroy", "-auto-approve")), " ")
	for _, want := range []string{"Virtual cluster left to its owner", "never applied the import",
		"then `terraform apply`: the apply makes this state its owner", "To remove it, adopt it, then destroy it"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the destroy right after the import does not say %q:\n%s", want, flat)
		}
	}
	if err := sameGroupIDs(t, name, &ids)(nil); err != nil {
		t.Fatalf("a destroy of a cluster this state does not own touched it: %v", err)
	}

	// What the messages say: import, apply, then destroy.
	w.MustRun("import", "ray_virtual_cluster.t", name)
	if out := w.MustRun("apply", "-auto-approve"); !strings.Contains(out, "Import took ownership of the virtual cluster") {
		t.Errorf("the import's apply did not say it took ownership:\n%s", out)
	}
	w.MustRun("destroy", "-auto-approve")
	if err := acctest.CheckNoGroupsInRay(t, name)(nil); err != nil {
		t.Fatal(err)
	}
	if rec := acctest.ReadRecord(t, name); rec != nil {
		t.Errorf("the destroy left the record: %+v", rec)
	}
}

// waitForCreateJob waits for the driver job that creates cluster name to be
// submitted and returns its submission id.
func waitForCreateJob(t *testing.T, name string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		jobs, err := acctest.Client(t).ListJobs(context.Background())
		if err == nil {
			for _, j := range jobs {
				id := j.SubmissionID
				if (strings.HasPrefix(id, "raytf_create_") || strings.HasPrefix(id, "raytf_batch_")) && strings.Contains(id, name) {
					return id
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no create job of %s within %s", name, timeout)
	return ""
}

// waitForJobEnd waits for job to end and returns its status.
func waitForJobEnd(t *testing.T, job string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last *rayclient.JobDetails
	for time.Now().Before(deadline) {
		if d, err := acctest.Client(t).GetJob(context.Background(), job); err == nil {
			last = d
			if s := d.Status; s == "SUCCEEDED" || s == "FAILED" || s == "STOPPED" {
				return s
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("job %s did not end within %s: %+v", job, timeout, last)
	return ""
}
