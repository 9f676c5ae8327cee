package rayclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient/rayclienttest"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// Integration tests against a real Ray dashboard. Run with
//
//	TF_ACC=1 [RAY_ADDRESS=http://127.0.0.1:8265] [RAY_TOKEN=...] go test ./internal/rayclient/ -run Integration -v

type tLogger struct{ t *testing.T }

func (l tLogger) Debug(_ context.Context, msg string, fields map[string]any) {
	l.t.Helper()
	if os.Getenv("RAYCLIENT_TEST_DEBUG") != "" {
		l.t.Logf("%s %v", msg, fields)
	}
}

func integrationClient(t *testing.T) *Client {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run integration tests against a real Ray cluster (RAY_ADDRESS, default http://127.0.0.1:8265)")
	}
	addr := os.Getenv("RAY_ADDRESS")
	if addr == "" {
		addr = "http://127.0.0.1:8265"
	}
	c, err := New(Config{Address: addr, Token: os.Getenv("RAY_TOKEN"), Logger: tLogger{t}, WrapTransport: new(rayclienttest.Counter).Wrap})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestIntegrationVersion(t *testing.T) {
	c := integrationClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := c.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("version=%s ray_version=%s ray_commit=%s session=%s", v.Version, v.RayVersion, v.RayCommit, v.SessionName)
	if v.RayVersion == "" || v.Version == "" || v.SessionName == "" {
		t.Errorf("version = %+v", v)
	}
}

func TestIntegrationNodes(t *testing.T) {
	c := integrationClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	res, err := c.ListNodesWithMeta(ctx, ListOptions{Filters: []Filter{Eq("state", raystate.NodeStateAlive)}, Detail: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("meta: %+v", res.Meta)
	if len(res.Items) == 0 {
		t.Fatal("no alive nodes")
	}
	heads := 0
	for _, n := range res.Items {
		keys := make([]string, 0, len(n.ResourcesTotal))
		for k := range n.ResourcesTotal {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var rs []string
		for _, k := range keys {
			rs = append(rs, fmt.Sprintf("%s=%g", k, n.ResourcesTotal[k]))
		}
		t.Logf("node %s ip=%s head=%t state=%s start=%d resources: %s", n.NodeID, n.NodeIP, n.IsHeadNode, n.State, n.StartTimeMs, strings.Join(rs, " "))
		if n.State != raystate.NodeStateAlive || n.NodeID == "" || n.NodeIP == "" || len(n.ResourcesTotal) == 0 || n.StartTimeMs == 0 {
			t.Errorf("node = %+v", n)
		}
		if n.IsHeadNode {
			heads++
		}
	}
	if heads != 1 {
		t.Errorf("head nodes = %d", heads)
	}

	// Client-side-only filter (is_head_node) and server-side one combined.
	head, err := c.ListNodes(ctx, ListOptions{Filters: []Filter{Eq("state", "alive"), Eq("is_head_node", "true")}})
	if err != nil || len(head) != 1 || !head[0].IsHeadNode {
		t.Errorf("head filter: %v %+v", err, head)
	}
	// Source-side filter that matches nothing is not reported as truncation.
	dead, err := c.ListNodes(ctx, ListOptions{Filters: []Filter{Eq("state", raystate.NodeStateDead)}})
	if err != nil {
		t.Errorf("dead filter: %v", err)
	}
	t.Logf("dead nodes: %d", len(dead))

	if len(res.Items) > 1 {
		rows, err := c.ListNodes(ctx, ListOptions{Limit: 1})
		var te *TruncatedError
		if len(rows) != 1 || !errors.As(err, &te) {
			t.Errorf("limit 1: rows=%d err=%v", len(rows), err)
		} else {
			t.Logf("truncation error: %v", err)
		}
	}

	_, err = c.ListNodes(ctx, ListOptions{Filters: []Filter{Eq("state", "BOGUS")}})
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Message != "Invalid node state for filtering: BOGUS" {
		t.Errorf("bogus state: %v", err)
	}
	_, err = c.ListNodes(ctx, ListOptions{Limit: 20000})
	if !errors.As(err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.Message, "exceeds the supported limit") {
		t.Errorf("limit 20000: %v", err)
	}
	t.Logf("limit error: %v", err)
}

func TestIntegrationPlacementGroups(t *testing.T) {
	c := integrationClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	all, err := c.ListPlacementGroups(ctx, ListOptions{Detail: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for i, pg := range all {
		if i < 10 {
			t.Logf("pg %s name=%q state=%s detached=%t job=%s bundles=%+v", pg.PlacementGroupID, pg.Name, pg.State, pg.IsDetached, pg.CreatorJobID, pg.Bundles)
		}
		if pg.PlacementGroupID == "" || pg.State == "" {
			t.Errorf("pg = %+v", pg)
		}
		for i, b := range pg.Bundles {
			if b.PlacementGroupID != pg.PlacementGroupID || b.BundleIndex != i || len(b.UnitResources) == 0 {
				t.Errorf("bundle %d = %+v", i, b)
			}
		}
	}
	if len(all) == 0 {
		t.Log("no placement groups in the cluster; filter checks are limited")
	}

	created, err := c.ListPlacementGroups(ctx, ListOptions{Filters: []Filter{Eq("state", raystate.PlacementGroupStateCreated)}})
	if err != nil {
		t.Fatal(err)
	}
	notRemoved, err := c.ListPlacementGroups(ctx, ListOptions{Filters: []Filter{Ne("state", raystate.PlacementGroupStateRemoved)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pg := range created {
		if pg.State != raystate.PlacementGroupStateCreated {
			t.Errorf("state filter returned %+v", pg)
		}
	}
	for _, pg := range notRemoved {
		if pg.State == raystate.PlacementGroupStateRemoved {
			t.Errorf("!= filter returned %+v", pg)
		}
	}
	t.Logf("created=%d not_removed=%d all=%d", len(created), len(notRemoved), len(all))

	if len(all) > 0 {
		first := all[0]
		byID, err := c.ListPlacementGroups(ctx, ListOptions{Filters: []Filter{Eq("placement_group_id", first.PlacementGroupID)}, Detail: true})
		if err != nil || len(byID) != 1 || byID[0].PlacementGroupID != first.PlacementGroupID {
			t.Errorf("by id: %v %+v", err, byID)
		}
	}

	// Ray checks a filter's column against the rows it lists: with no
	// group at all, a bad column answers 200 and an empty list.
	bad, err := c.ListPlacementGroups(ctx, ListOptions{Filters: []Filter{Eq("no_such_column", "x")}})
	var ae *APIError
	rejected := errors.As(err, &ae) && ae.StatusCode == 400 && strings.Contains(ae.Message, "not supported")
	if len(all) > 0 && !rejected || len(all) == 0 && !rejected && (err != nil || len(bad) != 0) {
		t.Errorf("bad column: %v %+v", err, bad)
	}
}

func TestIntegrationJobLifecycle(t *testing.T) {
	c := integrationClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	id := fmt.Sprintf("rayclient-test-%d", time.Now().UnixNano())
	t.Cleanup(func() { deleteForCleanup(t, c, id) })

	req := JobSubmitRequest{
		Entrypoint:   `python -c "print('hello')"`,
		SubmissionID: id,
		Metadata:     map[string]string{"test": "rayclient"},
	}
	resp, err := c.SubmitJob(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("submitted: %+v", resp)
	if resp.SubmissionID != id {
		t.Errorf("resp = %+v", resp)
	}

	_, err = c.SubmitJob(ctx, req)
	if !IsAlreadyExists(err) {
		t.Errorf("duplicate: IsAlreadyExists(%v) = false", err)
	}
	t.Logf("duplicate error: %v", err)

	job := waitTerminal(ctx, t, c, id)
	exit := "<nil>"
	if job.DriverExitCode != nil {
		exit = fmt.Sprint(*job.DriverExitCode)
	}
	t.Logf("job: status=%s message=%q exit=%s start=%d end=%d", job.Status, job.Message, exit, job.StartTime, job.EndTime)
	if job.Status != JobStatusSucceeded || job.Metadata["test"] != "rayclient" || job.Entrypoint != req.Entrypoint || job.Type != JobTypeSubmission {
		t.Errorf("job = %+v", job)
	}
	if job.DriverExitCode == nil || *job.DriverExitCode != 0 {
		t.Errorf("driver exit code = %v", job.DriverExitCode)
	}

	logs, err := c.GetJobLogs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("logs:\n%s", logs)
	if !strings.Contains(logs, "hello") {
		t.Errorf("logs = %q", logs)
	}

	jobs, err := c.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, j := range jobs {
		if j.SubmissionID == id {
			found = true
		}
	}
	if !found {
		t.Errorf("job %s not listed among %d jobs", id, len(jobs))
	}

	stopped, err := c.StopJob(ctx, id)
	if err != nil || stopped {
		t.Errorf("stop finished job: %v %v", stopped, err)
	}

	deleted, err := c.DeleteJob(ctx, id)
	if err != nil || !deleted {
		t.Fatalf("delete: %v %v", deleted, err)
	}
	if _, err := c.GetJob(ctx, id); !IsNotFound(err) {
		t.Errorf("after delete: %v", err)
	}

	unknown := "rayclient-test-does-not-exist/" + id
	_, err = c.GetJob(ctx, unknown)
	if !IsNotFound(err) {
		t.Errorf("unknown job: IsNotFound(%v) = false", err)
	}
	t.Logf("not found error: %v", err)
	if _, err := c.GetJobLogs(ctx, unknown); !IsNotFound(err) {
		t.Errorf("logs unknown: %v", err)
	}
	if _, err := c.StopJob(ctx, unknown); !IsNotFound(err) {
		t.Errorf("stop unknown: %v", err)
	}
	if _, err := c.DeleteJob(ctx, unknown); !IsNotFound(err) {
		t.Errorf("delete unknown: %v", err)
	}
	t.Logf("HTTP attempts: %d", requestCount(c))
}

func TestIntegrationDeleteRunningJobIsNotRetried(t *testing.T) {
	c := integrationClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	id := fmt.Sprintf("rayclient-test-running-%d", time.Now().UnixNano())
	t.Cleanup(func() { deleteForCleanup(t, c, id) })
	if _, err := c.SubmitJob(ctx, JobSubmitRequest{Entrypoint: `python -c "import time; time.sleep(60)"`, SubmissionID: id}); err != nil {
		t.Fatal(err)
	}
	before := requestCount(c)
	_, err := c.DeleteJob(ctx, id)
	t.Logf("delete running job: %v", err)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 500 || !strings.Contains(ae.Message, "non-terminal state") {
		t.Errorf("err = %v", err)
	}
	if n := requestCount(c) - before; n != 1 {
		t.Errorf("attempts = %d, want 1", n)
	}
	stopped, err := c.StopJob(ctx, id)
	if err != nil || !stopped {
		t.Errorf("stop: %v %v", stopped, err)
	}
	if j := waitTerminal(ctx, t, c, id); j.Status != JobStatusStopped {
		t.Errorf("after stop: %+v", j)
	}
}

// waitTerminal polls the job until its status is terminal.
func waitTerminal(ctx context.Context, t *testing.T, c *Client, id string) *JobDetails {
	t.Helper()
	for {
		j, err := c.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.IsTerminal() {
			return j
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s still %s: %v", id, j.Status, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// deleteForCleanup stops the job and deletes its record once Ray's job
// monitor is done with it, so that the monitor does not write it back.
func deleteForCleanup(t *testing.T, c *Client, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		alive, err := c.StopJob(ctx, id)
		if IsNotFound(err) {
			return
		}
		if err != nil || !alive {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	waitTerminal(ctx, t, c, id)
	time.Sleep(3 * time.Second)
	if _, err := c.DeleteJob(ctx, id); err != nil && !IsNotFound(err) {
		t.Errorf("cleanup: delete %s: %v", id, err)
	}
}
