package rayclient

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// DefaultListLimit is the limit sent when ListOptions.Limit is 0. It equals
// Ray's default RAY_MAX_LIMIT_FROM_API_SERVER; larger limits are rejected by
// the server with HTTP 400 unless that variable is raised on the cluster.
const DefaultListLimit = 10000

// Filter predicates understood by the state API.
const (
	OpEqual    = "="
	OpNotEqual = "!="
)

// Filter is one state API filter; multiple filters are ANDed. Keys are the
// filterable columns of the resource (nodes: node_id, node_ip,
// is_head_node, state, node_name; placement groups: placement_group_id,
// name, creator_job_id, state, is_detached). String comparisons are
// case-insensitive on the server; booleans accept true/false/1/0.
type Filter struct {
	Key, Op, Value string
}

// Eq returns the filter key = value.
func Eq(key, value string) Filter { return Filter{Key: key, Op: OpEqual, Value: value} }

// Ne returns the filter key != value.
func Ne(key, value string) Filter { return Filter{Key: key, Op: OpNotEqual, Value: value} }

// ListOptions are the state API list parameters.
type ListOptions struct {
	Filters []Filter
	// Limit is the maximum number of rows; 0 means DefaultListLimit.
	Limit int
	// Detail requests detail columns (placement groups: bundles,
	// is_detached, stats, topology_*; nodes: start_time_ms, end_time_ms).
	Detail bool
	// Timeout is the server-side timeout (sent as whole seconds, rounded
	// up; Ray applies 80% of it to its data source queries). 0 leaves Ray's
	// default of 30s. The per-attempt HTTP timeout is extended to
	// Timeout+5s if needed.
	Timeout time.Duration
}

// ListMeta carries the state API counters and warnings of a list response.
type ListMeta struct {
	// Total is the number of entries in the cluster (for nodes it also
	// counts entries the GCS filtered out for node_id/state/node_name "="
	// filters).
	Total int
	// NumAfterTruncation is the number of entries after data source
	// truncation.
	NumAfterTruncation int
	// NumFiltered is the number of entries that matched the filters.
	NumFiltered int
	// Returned is the number of rows in the response.
	Returned int
	// PartialFailureWarning is set when some data sources did not answer.
	PartialFailureWarning string
	// Warnings are informational server warnings.
	Warnings []string
}

// ListResult is a list response with its metadata.
type ListResult[T any] struct {
	Items []T
	Meta  ListMeta
}

// ListNodes lists nodes. A state=ALIVE (or node_id/node_name) "=" filter is
// applied by the GCS itself, so it is cheap. See ListNodesWithMeta for the
// error semantics.
func (c *Client) ListNodes(ctx context.Context, opts ListOptions) ([]raystate.Node, error) {
	res, err := c.ListNodesWithMeta(ctx, opts)
	if res == nil {
		return nil, err
	}
	return res.Items, err
}

// ListNodesWithMeta lists nodes and returns Ray's counters and warnings. When
// the result is incomplete the rows are returned together with a
// *TruncatedError and/or *PartialFailureError.
func (c *Client) ListNodesWithMeta(ctx context.Context, opts ListOptions) (*ListResult[raystate.Node], error) {
	// The GCS applies "=" filters on node_id/state/node_name at the source
	// and counts the rows it dropped into "total", so total >
	// num_after_truncation does not imply truncation in that case.
	sourceFiltered := false
	for _, f := range opts.Filters {
		switch strings.ToLower(f.Key) {
		case "node_id", "state", "node_name":
			if f.Op == OpEqual {
				sourceFiltered = true
			}
		}
	}
	return listState[raystate.Node](ctx, c, PathNodes, opts, sourceFiltered)
}

// ListPlacementGroups lists placement groups. See
// ListPlacementGroupsWithMeta for the error semantics.
func (c *Client) ListPlacementGroups(ctx context.Context, opts ListOptions) ([]raystate.PlacementGroup, error) {
	res, err := c.ListPlacementGroupsWithMeta(ctx, opts)
	if res == nil {
		return nil, err
	}
	return res.Items, err
}

// ListPlacementGroupsWithMeta lists placement groups and returns Ray's
// counters and warnings. When the result is incomplete the rows are returned
// together with a *TruncatedError and/or *PartialFailureError.
func (c *Client) ListPlacementGroupsWithMeta(ctx context.Context, opts ListOptions) (*ListResult[raystate.PlacementGroup], error) {
	return listState[raystate.PlacementGroup](ctx, c, PathPlacementGroups, opts, false)
}

// stateEnvelope is the rest_response shape used by the state API:
// {"result": bool, "msg": str, "data": {"result": ListApiResponse|null}}.
type stateEnvelope[T any] struct {
	Result *bool  `json:"result"`
	Msg    string `json:"msg"`
	Data   *struct {
		Result *struct {
			Total                 int      `json:"total"`
			NumAfterTruncation    int      `json:"num_after_truncation"`
			NumFiltered           int      `json:"num_filtered"`
			Result                []T      `json:"result"`
			PartialFailureWarning *string  `json:"partial_failure_warning"`
			Warnings              []string `json:"warnings"`
		} `json:"result"`
	} `json:"data"`
}

func listQuery(opts ListOptions) (url.Values, int, error) {
	limit := opts.Limit
	if limit < 0 {
		return nil, 0, fmt.Errorf("rayclient: list limit must not be negative (got %d)", limit)
	}
	if limit == 0 {
		limit = DefaultListLimit
	}
	q := url.Values{}
	q.Set("limit", strconv.Itoa(limit))
	if opts.Detail {
		q.Set("detail", "true")
	}
	if opts.Timeout < 0 {
		return nil, 0, fmt.Errorf("rayclient: list timeout must not be negative (got %s)", opts.Timeout)
	}
	if opts.Timeout > 0 {
		secs := int64(math.Ceil(opts.Timeout.Seconds()))
		q.Set("timeout", strconv.FormatInt(max(secs, 1), 10))
	}
	// Ray reads filter_keys, filter_predicates and filter_values with
	// getall() and zips them, so all three must be present, in order.
	// url.Values.Encode sorts by key but keeps the order of each key's
	// values, which keeps the triples aligned.
	for i, f := range opts.Filters {
		if strings.TrimSpace(f.Key) == "" {
			return nil, 0, fmt.Errorf("rayclient: filter %d: key must not be empty", i)
		}
		if f.Op != OpEqual && f.Op != OpNotEqual {
			return nil, 0, fmt.Errorf("rayclient: filter %d (%s): unsupported predicate %q; use %q or %q", i, f.Key, f.Op, OpEqual, OpNotEqual)
		}
		q.Add("filter_keys", f.Key)
		q.Add("filter_predicates", f.Op)
		q.Add("filter_values", f.Value)
	}
	return q, limit, nil
}

// State API list endpoints (the stand-in dashboard serves the same paths).
const (
	stateAPIPrefix      = "/api/v0/"
	PathNodes           = stateAPIPrefix + "nodes"
	PathPlacementGroups = stateAPIPrefix + "placement_groups"
)

func listState[T any](ctx context.Context, c *Client, path string, opts ListOptions, sourceFiltered bool) (*ListResult[T], error) {
	q, limit, err := listQuery(opts)
	if err != nil {
		return nil, err
	}
	resource := strings.TrimPrefix(path, stateAPIPrefix) // named so in errors
	r := request{method: http.MethodGet, path: path, query: q}
	if opts.Timeout > 0 {
		r.timeout = opts.Timeout + 5*time.Second
	}
	resp, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	var env stateEnvelope[T]
	if err := c.decode(r, resp, &env); err != nil {
		return nil, err
	}
	if env.Result == nil {
		return nil, &DecodeError{Method: r.method, Path: r.path, StatusCode: resp.status, ContentType: resp.contentType,
			Snippet: c.redact(truncateUTF8(string(resp.body), snippetBytes)), Err: errors.New(`missing "result" field in state API envelope`)}
	}
	if !*env.Result {
		msg := env.Msg
		if msg == "" {
			msg = "state API returned result=false"
		}
		return nil, c.apiError(r, resp, msg)
	}
	if env.Data == nil || env.Data.Result == nil {
		return nil, &DecodeError{Method: r.method, Path: r.path, StatusCode: resp.status, ContentType: resp.contentType,
			Snippet: c.redact(truncateUTF8(string(resp.body), snippetBytes)), Err: errors.New(`missing "data.result" in state API envelope`)}
	}
	lr := env.Data.Result
	items := lr.Result
	if items == nil {
		items = []T{}
	}
	out := &ListResult[T]{
		Items: items,
		Meta: ListMeta{
			Total:              lr.Total,
			NumAfterTruncation: lr.NumAfterTruncation,
			NumFiltered:        lr.NumFiltered,
			Returned:           len(items),
			Warnings:           lr.Warnings,
		},
	}
	if lr.PartialFailureWarning != nil {
		out.Meta.PartialFailureWarning = *lr.PartialFailureWarning
	}
	if len(lr.Warnings) > 0 {
		c.debug(ctx, "ray: state API warnings", map[string]any{"resource": resource, "warnings": strings.Join(lr.Warnings, "; ")})
	}

	var errs []error
	limitCut := lr.NumFiltered > len(items)
	sourceCut := !sourceFiltered && lr.Total > lr.NumAfterTruncation
	if limitCut || sourceCut {
		errs = append(errs, &TruncatedError{
			Resource:           resource,
			Returned:           len(items),
			Limit:              limit,
			Total:              lr.Total,
			NumAfterTruncation: lr.NumAfterTruncation,
			NumFiltered:        lr.NumFiltered,
		})
	}
	if w := strings.TrimSpace(out.Meta.PartialFailureWarning); w != "" {
		errs = append(errs, &PartialFailureError{Resource: resource, Warning: c.redact(w)})
	}
	switch len(errs) {
	case 0:
		return out, nil
	case 1:
		return out, errs[0]
	default:
		return out, errors.Join(errs...)
	}
}
