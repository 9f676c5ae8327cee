package rayclient

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"strings"
)

// Job statuses (ray.dashboard.modules.job.common.JobStatus).
const (
	JobStatusPending   = "PENDING"
	JobStatusRunning   = "RUNNING"
	JobStatusStopped   = "STOPPED"
	JobStatusSucceeded = "SUCCEEDED"
	JobStatusFailed    = "FAILED"
)

// JobTypeSubmission is the type of jobs submitted through the job API
// (ray.dashboard.modules.job.pydantic_models.JobType).
const JobTypeSubmission = "SUBMISSION"

// IsTerminalStatus reports whether a job status can no longer change
// (STOPPED, SUCCEEDED, FAILED).
func IsTerminalStatus(status string) bool {
	switch status {
	case JobStatusStopped, JobStatusSucceeded, JobStatusFailed:
		return true
	}
	return false
}

// JobSubmitRequest is the body of POST /api/jobs/
// (ray.dashboard.modules.job.common.JobSubmitRequest).
type JobSubmitRequest struct {
	Entrypoint string `json:"entrypoint"`
	// SubmissionID is generated client-side (raysubmit_XXXXXXXXXXXXXXXX,
	// Ray's own format) when empty, so that retries stay idempotent.
	SubmissionID        string             `json:"submission_id,omitempty"`
	RuntimeEnv          map[string]any     `json:"runtime_env,omitempty"`
	Metadata            map[string]string  `json:"metadata,omitempty"`
	EntrypointNumCPUs   float64            `json:"entrypoint_num_cpus,omitempty"`
	EntrypointNumGPUs   float64            `json:"entrypoint_num_gpus,omitempty"`
	EntrypointMemory    int64              `json:"entrypoint_memory,omitempty"`
	EntrypointResources map[string]float64 `json:"entrypoint_resources,omitempty"`
	// EntrypointLabelSelector constrains the node the entrypoint runs on.
	EntrypointLabelSelector map[string]string `json:"entrypoint_label_selector,omitempty"`
}

// JobSubmitResponse is the answer of POST /api/jobs/. Ray sets JobID to the
// submission id.
type JobSubmitResponse struct {
	JobID        string `json:"job_id"`
	SubmissionID string `json:"submission_id"`
}

// DriverInfo describes the driver of a job.
type DriverInfo struct {
	ID            string `json:"id"`
	NodeIPAddress string `json:"node_ip_address"`
	PID           string `json:"pid"`
}

// JobDetails is the job representation of GET /api/jobs/ and
// GET /api/jobs/{id} (ray.dashboard.modules.job.pydantic_models.JobDetails).
type JobDetails struct {
	// Type is SUBMISSION or DRIVER.
	Type string `json:"type"`
	// JobID is the Ray job id of the driver ("" until a driver connects;
	// a submitted entrypoint that never calls ray.init has none).
	JobID        string      `json:"job_id"`
	SubmissionID string      `json:"submission_id"`
	DriverInfo   *DriverInfo `json:"driver_info"`
	Status       string      `json:"status"`
	Entrypoint   string      `json:"entrypoint"`
	Message      string      `json:"message"`
	ErrorType    string      `json:"error_type"`
	// StartTime and EndTime are Unix milliseconds (0 if unset).
	StartTime              int64             `json:"start_time"`
	EndTime                int64             `json:"end_time"`
	Metadata               map[string]string `json:"metadata"`
	RuntimeEnv             map[string]any    `json:"runtime_env"`
	DriverAgentHTTPAddress string            `json:"driver_agent_http_address"`
	DriverNodeID           string            `json:"driver_node_id"`
	// DriverExitCode is nil until the driver has exited.
	DriverExitCode *int `json:"driver_exit_code"`
}

// IsTerminal reports whether the job's status can no longer change.
func (s JobDetails) IsTerminal() bool { return IsTerminalStatus(s.Status) }

// submissionIDAlphabet is Ray's generate_job_id alphabet (letters and digits
// without I, l, o, O, 0).
const submissionIDAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz123456789"

// NewSubmissionID returns an id in Ray's own format, raysubmit_ followed by
// 16 random characters.
func NewSubmissionID() string {
	var b strings.Builder
	b.WriteString("raysubmit_")
	n := big.NewInt(int64(len(submissionIDAlphabet)))
	for range 16 {
		i, err := rand.Int(rand.Reader, n)
		if err != nil {
			panic(fmt.Sprintf("rayclient: crypto/rand failed: %v", err))
		}
		b.WriteByte(submissionIDAlphabet[i.Int64()])
	}
	return b.String()
}

// SubmitJob submits a job (POST /api/jobs/).
//
// A duplicate submission id fails with an error for which IsAlreadyExists
// is true (Ray answers HTTP 500 with a traceback; that is not retried). If an
// earlier attempt of this same call failed ambiguously (connection error or
// retryable 5xx) and a retry then reports "already exists", the existing
// job is fetched and, if its entrypoint and metadata match the request, the
// submission is treated as successful.
func (c *Client) SubmitJob(ctx context.Context, req JobSubmitRequest) (*JobSubmitResponse, error) {
	if strings.TrimSpace(req.Entrypoint) == "" {
		return nil, errors.New("rayclient: job entrypoint must not be empty")
	}
	if req.SubmissionID == "" {
		req.SubmissionID = NewSubmissionID()
	} else if _, err := escapeID(req.SubmissionID); err != nil {
		return nil, err
	}
	r := request{method: http.MethodPost, path: "/api/jobs/", body: req}
	resp, err := c.do(ctx, r)
	if err != nil {
		var ae *APIError
		if IsAlreadyExists(err) && errors.As(err, &ae) && ae.Attempts > 1 {
			if job, gerr := c.GetJob(ctx, req.SubmissionID); gerr == nil && sameSubmission(job, req) {
				c.debug(ctx, "ray: job already created by an earlier attempt", map[string]any{"submission_id": req.SubmissionID})
				return &JobSubmitResponse{JobID: req.SubmissionID, SubmissionID: req.SubmissionID}, nil
			}
		}
		return nil, err
	}
	var out JobSubmitResponse
	if err := c.decode(r, resp, &out); err != nil {
		return nil, err
	}
	if out.SubmissionID == "" {
		out.SubmissionID = req.SubmissionID
	}
	return &out, nil
}

func sameSubmission(job *JobDetails, req JobSubmitRequest) bool {
	if job.Type != "" && job.Type != JobTypeSubmission {
		return false
	}
	if job.Entrypoint != req.Entrypoint {
		return false
	}
	return maps.Equal(job.Metadata, req.Metadata)
}

// GetJob returns a job by submission id or job id (GET /api/jobs/{id}).
// A missing job yields an error for which IsNotFound is true.
func (c *Client) GetJob(ctx context.Context, id string) (*JobDetails, error) {
	esc, err := escapeID(id)
	if err != nil {
		return nil, err
	}
	r := request{method: http.MethodGet, path: "/api/jobs/" + esc}
	resp, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	var out JobDetails
	if err := c.decode(r, resp, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListJobs lists submission and driver jobs (GET /api/jobs/).
func (c *Client) ListJobs(ctx context.Context) ([]JobDetails, error) {
	r := request{method: http.MethodGet, path: "/api/jobs/"}
	resp, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	var out []JobDetails
	if err := c.decode(r, resp, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []JobDetails{}
	}
	return out, nil
}

// GetJobLogs returns the full driver log of a submission job
// (GET /api/jobs/{id}/logs). Driver (non-submission) jobs yield HTTP 400.
func (c *Client) GetJobLogs(ctx context.Context, id string) (string, error) {
	esc, err := escapeID(id)
	if err != nil {
		return "", err
	}
	r := request{method: http.MethodGet, path: "/api/jobs/" + esc + "/logs"}
	resp, err := c.do(ctx, r)
	if err != nil {
		return "", err
	}
	var out struct {
		Logs *string `json:"logs"`
	}
	if err := c.decode(r, resp, &out); err != nil {
		return "", err
	}
	if out.Logs == nil {
		return "", &DecodeError{Method: r.method, Path: r.path, StatusCode: resp.status, ContentType: resp.contentType,
			Snippet: c.redact(truncateUTF8(string(resp.body), snippetBytes)), Err: errors.New(`missing "logs" field`)}
	}
	return *out.Logs, nil
}

// StopJob asks Ray to stop a submission job (POST /api/jobs/{id}/stop). It
// returns false if the job was not running (e.g. already terminal).
func (c *Client) StopJob(ctx context.Context, id string) (bool, error) {
	esc, err := escapeID(id)
	if err != nil {
		return false, err
	}
	r := request{method: http.MethodPost, path: "/api/jobs/" + esc + "/stop"}
	resp, err := c.do(ctx, r)
	if err != nil {
		return false, err
	}
	var out struct {
		Stopped *bool `json:"stopped"`
	}
	if err := c.decode(r, resp, &out); err != nil {
		return false, err
	}
	if out.Stopped == nil {
		return false, &DecodeError{Method: r.method, Path: r.path, StatusCode: resp.status, ContentType: resp.contentType,
			Snippet: c.redact(truncateUTF8(string(resp.body), snippetBytes)), Err: errors.New(`missing "stopped" field`)}
	}
	return *out.Stopped, nil
}

// DeleteJob deletes a terminal submission job's info (DELETE
// /api/jobs/{id}). Deleting a job that is not terminal fails with HTTP 500
// ("... non-terminal state ..."), which is not retried. If a retried delete
// finds the job already gone, the error satisfies IsNotFound.
func (c *Client) DeleteJob(ctx context.Context, id string) (bool, error) {
	esc, err := escapeID(id)
	if err != nil {
		return false, err
	}
	r := request{method: http.MethodDelete, path: "/api/jobs/" + esc}
	resp, err := c.do(ctx, r)
	if err != nil {
		return false, err
	}
	var out struct {
		Deleted *bool `json:"deleted"`
	}
	if err := c.decode(r, resp, &out); err != nil {
		return false, err
	}
	if out.Deleted == nil {
		return false, &DecodeError{Method: r.method, Path: r.path, StatusCode: resp.status, ContentType: resp.contentType,
			Snippet: c.redact(truncateUTF8(string(resp.body), snippetBytes)), Err: errors.New(`missing "deleted" field`)}
	}
	return *out.Deleted, nil
}
