package rayclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sitePkgs = "/root/.cache/terraform-provider-ray/ray-2.60.0/lib/python3.11/site-packages"

// duplicateSubmissionBody is Ray 2.60.0's HTTP 500 text/plain body for
// POST /api/jobs/ with a submission_id that already exists.
func duplicateSubmissionBody(id string) string {
	return `Traceback (most recent call last):
  File "` + sitePkgs + `/ray/dashboard/modules/job/job_head.py", line 419, in submit_job
    resp = await job_agent_client.submit_job_internal(submit_request)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "` + sitePkgs + `/ray/dashboard/modules/job/job_head.py", line 148, in submit_job_internal
    await self._raise_error(resp)
  File "` + sitePkgs + `/ray/dashboard/modules/job/job_head.py", line 134, in _raise_error
    raise RuntimeError(f"Request failed with status code {status}: {error_text}.")
RuntimeError: Request failed with status code 400: Traceback (most recent call last):
  File "` + sitePkgs + `/ray/dashboard/modules/job/job_agent.py", line 45, in submit_job
    submission_id = await self.get_job_manager().submit_job(
                    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "` + sitePkgs + `/ray/dashboard/modules/job/job_manager.py", line 553, in submit_job
    raise ValueError(
ValueError: Job with submission_id ` + id + ` already exists. Please use a different submission_id.
.
`
}

// deleteRunningBody is the shape of Ray 2.60.0's HTTP 500 body for
// DELETE /api/jobs/{id} on a job that is still running.
func deleteRunningBody(id string) string {
	return `Traceback (most recent call last):
  File "` + sitePkgs + `/ray/dashboard/modules/job/job_head.py", line 381, in delete_job
    resp = await job_agent_client.delete_job_internal(job.submission_id)
  File "` + sitePkgs + `/ray/dashboard/modules/job/job_head.py", line 134, in _raise_error
    raise RuntimeError(f"Request failed with status code {status}: {error_text}.")
RuntimeError: Request failed with status code 500: Traceback (most recent call last):
  File "` + sitePkgs + `/ray/dashboard/modules/job/job_manager.py", line 655, in delete_job
    raise RuntimeError(
RuntimeError: Attempted to delete job '` + id + `', but it is in a non-terminal state RUNNING.
.
`
}

// Captured from Ray 2.60.0: GET /api/jobs/{id} for a finished job.
const jobBody = `{"type": "SUBMISSION", "job_id": null, "submission_id": "rayclient-test-probe-11907", "driver_info": null, "status": "SUCCEEDED", "entrypoint": "python -c \"print('hello')\"", "message": "Job finished successfully.", "error_type": null, "start_time": 1796217862776, "end_time": 1796217863708, "metadata": {"a": "b"}, "runtime_env": null, "driver_agent_http_address": "http://127.0.0.10:20004", "driver_node_id": "7c98bcd000b5838d1b953f1b3bfe0bf0475687392e7ccfcdaeec471d", "driver_exit_code": 0}`

const jobListBody = `[{"type": "SUBMISSION", "job_id": "02000000", "submission_id": "probe-1", "driver_info": {"id": "02000000", "node_ip_address": "127.0.0.10", "pid": "11519"}, "status": "RUNNING", "entrypoint": "python x.py", "message": "Job is currently running.", "error_type": null, "start_time": 1796217658998, "end_time": null, "metadata": {}, "runtime_env": {"env_vars": {"A": "1"}}, "driver_agent_http_address": "http://127.0.0.10:20004", "driver_node_id": "7c98", "driver_exit_code": null},` +
	`{"type": "DRIVER", "job_id": "01000000", "submission_id": null, "driver_info": {"id": "01000000", "node_ip_address": "127.0.0.10", "pid": "100"}, "status": "FAILED", "entrypoint": "", "message": null, "error_type": null, "start_time": 1, "end_time": 2, "metadata": {}, "runtime_env": {}, "driver_agent_http_address": null, "driver_node_id": null, "driver_exit_code": 1}]`

// fakeJobs is a minimal in-memory imitation of Ray's job API.
type fakeJobs struct {
	mu       sync.Mutex
	jobs     map[string]JobDetails
	bodies   []map[string]any
	failNext int // answer this many submits with 503 after storing the job
	preFail  int // answer this many submits with 503 before looking at them
}

func (f *fakeJobs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	text := func(code int, s string) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		io.WriteString(w, s)
	}
	js := func(v any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(v)
	}
	// Ray's routes match on the decoded path.
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && p == "/api/jobs/" && f.preFail > 0:
		f.preFail--
		text(503, "No available agent to submit job, please try again later.")
	case r.Method == http.MethodPost && p == "/api/jobs/":
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			text(400, "bad json")
			return
		}
		f.bodies = append(f.bodies, body)
		id, _ := body["submission_id"].(string)
		if _, ok := f.jobs[id]; ok {
			text(500, duplicateSubmissionBody(id))
			return
		}
		md := map[string]string{}
		if m, ok := body["metadata"].(map[string]any); ok {
			for k, v := range m {
				md[k], _ = v.(string)
			}
		}
		f.jobs[id] = JobDetails{Type: "SUBMISSION", SubmissionID: id, Status: JobStatusRunning, Entrypoint: body["entrypoint"].(string), Metadata: md}
		if f.failNext > 0 {
			f.failNext--
			text(503, "upstream hiccup")
			return
		}
		js(map[string]string{"job_id": id, "submission_id": id})
	case strings.HasPrefix(p, "/api/jobs/"):
		rest := strings.TrimPrefix(p, "/api/jobs/")
		suffix := ""
		if i := strings.LastIndex(rest, "/"); i >= 0 && (strings.HasSuffix(rest, "/logs") || strings.HasSuffix(rest, "/stop")) {
			rest, suffix = rest[:i], rest[i:]
		}
		job, ok := f.jobs[rest]
		if !ok {
			text(404, "Job "+rest+" does not exist")
			return
		}
		switch {
		case r.Method == http.MethodGet && suffix == "":
			js(job)
		case r.Method == http.MethodGet && suffix == "/logs":
			js(map[string]string{"logs": "Running entrypoint for job " + rest + ": " + job.Entrypoint + "\nhello\n"})
		case r.Method == http.MethodPost && suffix == "/stop":
			stopped := !IsTerminalStatus(job.Status)
			job.Status = JobStatusStopped
			f.jobs[rest] = job
			js(map[string]bool{"stopped": stopped})
		case r.Method == http.MethodDelete && suffix == "":
			if !IsTerminalStatus(job.Status) {
				text(500, deleteRunningBody(rest))
				return
			}
			delete(f.jobs, rest)
			js(map[string]bool{"deleted": true})
		default:
			text(405, "405: Method Not Allowed")
		}
	default:
		text(404, "404: Not Found")
	}
}

func newFake(t *testing.T) (*fakeJobs, *Client) {
	f := &fakeJobs{jobs: map[string]JobDetails{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, newTestClient(t, srv.URL)
}

func TestSubmitJobWireShape(t *testing.T) {
	var body map[string]any
	var ct, method, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, path, ct = r.Method, r.URL.Path, r.Header.Get("Content-Type")
		json.NewDecoder(r.Body).Decode(&body)
		io.WriteString(w, `{"job_id": "rayclient-test-1", "submission_id": "rayclient-test-1"}`)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	resp, err := c.SubmitJob(context.Background(), JobSubmitRequest{
		Entrypoint:          "python -c \"print('hello')\"",
		SubmissionID:        "rayclient-test-1",
		RuntimeEnv:          map[string]any{"env_vars": map[string]any{"A": "1"}},
		Metadata:            map[string]string{"owner": "tf"},
		EntrypointNumCPUs:   0.5,
		EntrypointResources: map[string]float64{"topo_rank": 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JobID != "rayclient-test-1" || resp.SubmissionID != "rayclient-test-1" {
		t.Errorf("resp = %+v", resp)
	}
	if method != "POST" || path != "/api/jobs/" || ct != "application/json" {
		t.Errorf("%s %s %s", method, path, ct)
	}
	want := map[string]any{
		"entrypoint":           "python -c \"print('hello')\"",
		"submission_id":        "rayclient-test-1",
		"runtime_env":          map[string]any{"env_vars": map[string]any{"A": "1"}},
		"metadata":             map[string]any{"owner": "tf"},
		"entrypoint_num_cpus":  0.5,
		"entrypoint_resources": map[string]any{"topo_rank": 1.0},
	}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestSubmitJobGeneratesSubmissionID(t *testing.T) {
	f, c := newFake(t)
	resp, err := c.SubmitJob(context.Background(), JobSubmitRequest{Entrypoint: "echo hi"})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^raysubmit_[A-HJ-NP-Za-km-z1-9]{16}$`).MatchString(resp.SubmissionID) {
		t.Errorf("generated id = %q", resp.SubmissionID)
	}
	if f.bodies[0]["submission_id"] != resp.SubmissionID {
		t.Errorf("sent %v", f.bodies[0])
	}
	if _, err := c.SubmitJob(context.Background(), JobSubmitRequest{}); err == nil {
		t.Error("empty entrypoint accepted")
	}
}

func TestSubmitJobDuplicate(t *testing.T) {
	f, c := newFake(t)
	ctx := context.Background()
	req := JobSubmitRequest{Entrypoint: "echo hi", SubmissionID: "rayclient-test-dup"}
	if _, err := c.SubmitJob(ctx, req); err != nil {
		t.Fatal(err)
	}
	before := requestCount(c)
	_, err := c.SubmitJob(ctx, req)
	if !IsAlreadyExists(err) {
		t.Fatalf("IsAlreadyExists(%v) = false", err)
	}
	if IsNotFound(err) {
		t.Error("IsNotFound true for duplicate")
	}
	if got := requestCount(c) - before; got != 1 {
		t.Errorf("duplicate submit retried: %d attempts", got)
	}
	want := "ray: POST /api/jobs/: 500 Internal Server Error: Job with submission_id rayclient-test-dup already exists. Please use a different submission_id."
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err.Error(), want)
	}
	var ae *APIError
	if errors.As(err, &ae); !strings.Contains(ae.Body, "Traceback") {
		t.Errorf("body = %q", ae.Body)
	}
	_ = f
}

func TestSubmitJobAmbiguousRetryReconciles(t *testing.T) {
	f, c := newFake(t)
	ctx := context.Background()
	f.failNext = 1 // job is created, but the answer is lost (503), then the retry sees a duplicate
	resp, err := c.SubmitJob(ctx, JobSubmitRequest{Entrypoint: "echo hi", SubmissionID: "rayclient-test-amb", Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatalf("SubmitJob: %v", err)
	}
	if resp.SubmissionID != "rayclient-test-amb" {
		t.Errorf("resp = %+v", resp)
	}
	if len(f.bodies) != 2 {
		t.Errorf("submits = %d", len(f.bodies))
	}

	// An ambiguous first attempt followed by "already exists" for a job that
	// is not ours (different entrypoint) stays an error.
	f.mu.Lock()
	f.jobs["rayclient-test-other"] = JobDetails{Type: "SUBMISSION", SubmissionID: "rayclient-test-other", Entrypoint: "something else"}
	f.preFail = 1
	f.mu.Unlock()
	_, err = c.SubmitJob(ctx, JobSubmitRequest{Entrypoint: "echo hi", SubmissionID: "rayclient-test-other"})
	if !IsAlreadyExists(err) {
		t.Errorf("err = %v", err)
	}
	var ae *APIError
	if errors.As(err, &ae) && ae.Attempts != 2 {
		t.Errorf("attempts = %d", ae.Attempts)
	}
}

func TestGetJobShapeAndNotFound(t *testing.T) {
	var rawPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rawPath = r.URL.EscapedPath()
		if strings.HasSuffix(r.URL.Path, "rayclient-test-probe-11907") {
			io.WriteString(w, jobBody)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(404)
		io.WriteString(w, "Job "+r.URL.Path[len("/api/jobs/"):]+" does not exist")
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	ctx := context.Background()

	j, err := c.GetJob(ctx, "rayclient-test-probe-11907")
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	want := JobDetails{
		Type: "SUBMISSION", SubmissionID: "rayclient-test-probe-11907", Status: JobStatusSucceeded,
		Entrypoint: "python -c \"print('hello')\"", Message: "Job finished successfully.",
		StartTime: 1796217862776, EndTime: 1796217863708, Metadata: map[string]string{"a": "b"},
		DriverAgentHTTPAddress: "http://127.0.0.10:20004", DriverNodeID: "7c98bcd000b5838d1b953f1b3bfe0bf0475687392e7ccfcdaeec471d",
		DriverExitCode: &zero,
	}
	if diff := cmp.Diff(want, *j); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
	if !j.IsTerminal() || j.SubmissionID != "rayclient-test-probe-11907" {
		t.Error("IsTerminal/ID")
	}

	_, err = c.GetJob(ctx, "x")
	if !IsNotFound(err) || IsAlreadyExists(err) {
		t.Errorf("IsNotFound(%v) = false", err)
	}
	if err.Error() != "ray: GET /api/jobs/x: 404 Not Found: Job x does not exist" {
		t.Errorf("error = %q", err.Error())
	}
	if requestCount(c) != 2 {
		t.Errorf("404 retried: %d", requestCount(c))
	}

	// The id is escaped as a single path segment.
	_, err = c.GetJob(ctx, "a b/c?d#e")
	if rawPath != "/api/jobs/a%20b%2Fc%3Fd%23e" {
		t.Errorf("escaped path = %q", rawPath)
	}
	if !IsNotFound(err) || !strings.Contains(err.Error(), "Job a b/c?d#e does not exist") {
		t.Errorf("err = %v", err)
	}

	// Empty ids never reach the server (GET /api/jobs/ would list jobs).
	n := requestCount(c)
	for _, id := range []string{"", " ", ".", ".."} {
		if _, err := c.GetJob(ctx, id); err == nil {
			t.Errorf("GetJob(%q) accepted", id)
		}
		if _, err := c.DeleteJob(ctx, id); err == nil {
			t.Errorf("DeleteJob(%q) accepted", id)
		}
	}
	if requestCount(c) != n {
		t.Error("invalid ids were sent")
	}
}

func TestGenericRouter404IsNotNotFound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		io.WriteString(w, "404: Not Found")
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	_, err := c.GetJob(context.Background(), "x")
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 404 {
		t.Fatalf("err = %v", err)
	}
	if IsNotFound(err) {
		t.Error("a router 404 (wrong server / missing endpoint) must not look like a missing job")
	}
}

func TestListJobsShape(t *testing.T) {
	srv := httptest.NewServer(jsonHandler(200, jobListBody, nil))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	jobs, err := c.ListJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		t.Fatalf("jobs = %d", len(jobs))
	}
	j := jobs[0]
	if j.JobID != "02000000" || j.DriverInfo == nil || j.DriverInfo.PID != "11519" || j.DriverInfo.NodeIPAddress != "127.0.0.10" ||
		j.IsTerminal() || j.DriverExitCode != nil || j.EndTime != 0 || j.RuntimeEnv["env_vars"] == nil {
		t.Errorf("job0 = %+v", j)
	}
	if jobs[1].Type != "DRIVER" || jobs[1].JobID != "01000000" || *jobs[1].DriverExitCode != 1 || !jobs[1].IsTerminal() {
		t.Errorf("job1 = %+v", jobs[1])
	}
}

func TestJobLifecycleShapes(t *testing.T) {
	f, c := newFake(t)
	ctx := context.Background()
	id := "rayclient-test-life"
	if _, err := c.SubmitJob(ctx, JobSubmitRequest{Entrypoint: "sleep 100", SubmissionID: id}); err != nil {
		t.Fatal(err)
	}
	logs, err := c.GetJobLogs(ctx, id)
	if err != nil || !strings.Contains(logs, "hello\n") {
		t.Errorf("logs = %q, %v", logs, err)
	}

	// Deleting a running job: Ray answers 500 with a traceback; not retried.
	n := requestCount(c)
	ok, err := c.DeleteJob(ctx, id)
	if ok || err == nil || requestCount(c)-n != 1 {
		t.Fatalf("delete running: %v %v (attempts %d)", ok, err, requestCount(c)-n)
	}
	if !strings.HasSuffix(err.Error(), "500 Internal Server Error: Attempted to delete job '"+id+"', but it is in a non-terminal state RUNNING.") {
		t.Errorf("error = %q", err.Error())
	}

	stopped, err := c.StopJob(ctx, id)
	if err != nil || !stopped {
		t.Errorf("stop = %v %v", stopped, err)
	}
	stopped, err = c.StopJob(ctx, id)
	if err != nil || stopped {
		t.Errorf("second stop = %v %v", stopped, err)
	}
	j, err := c.GetJob(ctx, id)
	if err != nil || j.Status != JobStatusStopped {
		t.Errorf("after stop = %+v %v", j, err)
	}
	deleted, err := c.DeleteJob(ctx, id)
	if err != nil || !deleted {
		t.Errorf("delete = %v %v", deleted, err)
	}
	for name, call := range map[string]func() error{
		"get":    func() error { _, err := c.GetJob(ctx, id); return err },
		"logs":   func() error { _, err := c.GetJobLogs(ctx, id); return err },
		"stop":   func() error { _, err := c.StopJob(ctx, id); return err },
		"delete": func() error { _, err := c.DeleteJob(ctx, id); return err },
	} {
		if err := call(); !IsNotFound(err) {
			t.Errorf("%s after delete: %v", name, err)
		}
	}
	_ = f
}

func TestJobResponseMissingFields(t *testing.T) {
	srv := httptest.NewServer(jsonHandler(200, `{}`, nil))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	if _, err := c.StopJob(ctx, "x"); err == nil || !strings.Contains(err.Error(), `missing "stopped"`) {
		t.Errorf("stop: %v", err)
	}
	if _, err := c.DeleteJob(ctx, "x"); err == nil || !strings.Contains(err.Error(), `missing "deleted"`) {
		t.Errorf("delete: %v", err)
	}
}

func TestIsTerminalStatus(t *testing.T) {
	for s, want := range map[string]bool{"PENDING": false, "RUNNING": false, "STOPPED": true, "SUCCEEDED": true, "FAILED": true, "": false} {
		if IsTerminalStatus(s) != want || (JobDetails{Status: s}).IsTerminal() != want {
			t.Errorf("%q", s)
		}
	}
}

func TestRequestCountConcurrent(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, versionBody)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Version(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if requestCount(c) != 20 || n.Load() != 20 {
		t.Errorf("RequestCount = %d, server = %d", requestCount(c), n.Load())
	}
}
