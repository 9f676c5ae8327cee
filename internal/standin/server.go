package standin

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// Defaults of Ray's state API (ray.util.state.common): the limit when none is
// given and the largest limit the server accepts (RAY_MAX_LIMIT_FROM_API_SERVER).
const (
	DefaultLimit = 100
	MaxLimit     = 10000
)

// Version is the /api/version answer.
type Version struct {
	Version     string `json:"version"`
	RayVersion  string `json:"ray_version"`
	RayCommit   string `json:"ray_commit"`
	SessionName string `json:"session_name"`
}

// DefaultVersion is what a Ray 2.60.0 dashboard reports (with a stand-in session).
var DefaultVersion = Version{Version: "4", RayVersion: "2.60.0",
	RayCommit: "0000000000000000000000000000000000000000", SessionName: "session_standin"}

// filterable columns per list, as ray.util.state.common declares them.
var (
	nodeColumns  = []string{"node_id", "node_ip", "is_head_node", "state", "node_name"}
	groupColumns = []string{"placement_group_id", "name", "creator_job_id", "state", "is_detached"}
)

// Server is the stand-in dashboard. Rows are rendered to JSON once when they
// are set, so serving 10,000 nodes costs a copy, not an encode, and the
// stand-in stays out of the measurements it is used for.
type Server struct {
	mu      sync.RWMutex
	version Version
	nodes   []rendered[Node]
	groups  []rendered[PlacementGroup]

	countMu  sync.Mutex
	requests map[string]int64 // path -> requests served
}

// rendered is a row with its JSON without and with the detail columns.
type rendered[T any] struct {
	row            T
	plain, rdetail []byte
}

// renderRows renders rows once and sorts them by id, as Ray returns them.
func renderRows[T any](rows []T, render func(*T, bool) []byte, id func(*T) string) []rendered[T] {
	out := make([]rendered[T], len(rows))
	for i := range rows {
		out[i] = rendered[T]{row: rows[i], plain: render(&rows[i], false), rdetail: render(&rows[i], true)}
	}
	sort.SliceStable(out, func(a, b int) bool { return id(&out[a].row) < id(&out[b].row) })
	return out
}

// New returns a server answering for the given alive nodes and no
// placement groups.
func New(nodes []Node) *Server {
	s := &Server{version: DefaultVersion}
	s.SetNodes(nodes)
	return s
}

// SetVersion changes the /api/version answer.
func (s *Server) SetVersion(v Version) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = v
}

// SetNodes replaces the node list.
func (s *Server) SetNodes(nodes []Node) {
	out := renderRows(nodes, renderNode, func(n *Node) string { return n.NodeID })
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes = out
}

// SetPlacementGroups replaces the placement-group list.
func (s *Server) SetPlacementGroups(groups []PlacementGroup) {
	out := renderRows(groups, renderGroup, func(g *PlacementGroup) string { return g.PlacementGroupID })
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups = out
}

// Requests is the number of requests served for a path, e.g. "/api/v0/nodes".
func (s *Server) Requests(path string) int64 {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	return s.requests[path]
}

func (s *Server) count(path string) {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	if s.requests == nil {
		s.requests = map[string]int64{}
	}
	s.requests[path]++
}

// ServeHTTP answers GET /api/version, /api/v0/nodes and
// /api/v0/placement_groups; anything else is 404 as on a real dashboard
// without that route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.count(r.URL.Path)
	if r.Method != http.MethodGet {
		http.Error(w, "405: Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case "/api/version":
		s.mu.RLock()
		v := s.version
		s.mu.RUnlock()
		var out pyWriter
		out.WriteByte('{')
		for i, kv := range [][2]string{{"version", v.Version}, {"ray_version", v.RayVersion}, {"ray_commit", v.RayCommit}, {"session_name", v.SessionName}} {
			out.key(kv[0], i == 0)
			out.str(kv[1])
		}
		out.WriteByte('}')
		writeJSON(w, http.StatusOK, out.Bytes())
	case rayclient.PathNodes:
		s.mu.RLock()
		nodes := s.nodes
		s.mu.RUnlock()
		serveList(w, r.URL.Query(), nodeColumns, len(nodes), func(i int) (func(string) (string, bool), []byte, []byte) {
			n := &nodes[i]
			return nodeColumn(&n.row), n.plain, n.rdetail
		})
	case rayclient.PathPlacementGroups:
		s.mu.RLock()
		groups := s.groups
		s.mu.RUnlock()
		serveList(w, r.URL.Query(), groupColumns, len(groups), func(i int) (func(string) (string, bool), []byte, []byte) {
			g := &groups[i]
			return groupColumn(&g.row), g.plain, g.rdetail
		})
	default:
		http.Error(w, "404: Not Found", http.StatusNotFound)
	}
}

func nodeColumn(n *Node) func(string) (string, bool) {
	return func(col string) (string, bool) {
		switch col {
		case "node_id":
			return n.NodeID, false
		case "node_ip":
			return n.NodeIP, false
		case "is_head_node":
			return strconv.FormatBool(n.IsHeadNode), true
		case "state":
			return n.State, false
		case "node_name":
			return n.NodeName, false
		}
		return "", false
	}
}

func groupColumn(g *PlacementGroup) func(string) (string, bool) {
	return func(col string) (string, bool) {
		switch col {
		case "placement_group_id":
			return g.PlacementGroupID, false
		case "name":
			return g.Name, false
		case "creator_job_id":
			return g.CreatorJobID, false
		case "state":
			return g.State, false
		case "is_detached":
			return strconv.FormatBool(g.IsDetached), true
		}
		return "", false
	}
}

type filter struct{ key, op, value string }

// parseListQuery reads limit, detail and the filter triples the way Ray's
// state head does; bad is the message Ray answers with HTTP 400 ("" if none).
func parseListQuery(q url.Values, columns []string) (limit int, detail bool, filters []filter, bad string) {
	limit = DefaultLimit
	if v := q.Get("limit"); v != "" {
		var err error
		if limit, err = strconv.Atoi(v); err != nil {
			return 0, false, nil, fmt.Sprintf("invalid literal for int() with base 10: '%s'", v)
		}
	}
	if limit > MaxLimit {
		return 0, false, nil, fmt.Sprintf("Given limit %d exceeds the supported limit %d. Use a lower limit, "+
			"or set the `RAY_MAX_LIMIT_FROM_API_SERVER` environment variable to a larger value.", limit, MaxLimit)
	}
	detail = strings.EqualFold(q.Get("detail"), "true") || q.Get("detail") == "1"
	keys, preds, vals := q["filter_keys"], q["filter_predicates"], q["filter_values"]
	for i := 0; i < len(keys) && i < len(preds) && i < len(vals); i++ {
		f := filter{key: strings.ToLower(keys[i]), op: preds[i], value: vals[i]}
		if !contains(columns, f.key) {
			return 0, false, nil, fmt.Sprintf("The given filter column %s is not supported. Enter filters with "+
				"–-filter key=value or –-filter key!=value Supported filter columns: %s", f.key, pySet(columns))
		}
		if f.op != "=" && f.op != "!=" {
			return 0, false, nil, fmt.Sprintf("Unsupported filter predicate %s is given. Available predicates: =, !=.", f.op)
		}
		filters = append(filters, f)
	}
	return limit, detail, filters, ""
}

// serveList writes the state API envelope for rows 0..n-1 (already in id
// order): filters first, then the limit, with Ray's counters.
func serveList(w http.ResponseWriter, q url.Values, columns []string, n int,
	row func(int) (col func(string) (string, bool), plain, detail []byte)) {
	limit, detail, filters, bad := parseListQuery(q, columns)
	if bad != "" {
		var out pyWriter
		out.WriteString(`{"result": false, "msg": `)
		out.str(bad)
		out.WriteString(`, "data": {"result": null}}`)
		writeJSON(w, http.StatusBadRequest, out.Bytes())
		return
	}
	var body bytes.Buffer
	matched, returned := 0, 0
	for i := 0; i < n; i++ {
		col, plain, full := row(i)
		if !matches(col, filters) {
			continue
		}
		matched++
		if returned >= limit {
			continue
		}
		if returned > 0 {
			body.WriteString(", ")
		}
		if detail {
			body.Write(full)
		} else {
			body.Write(plain)
		}
		returned++
	}
	var out bytes.Buffer
	out.Grow(body.Len() + 256)
	fmt.Fprintf(&out, `{"result": true, "msg": "", "data": {"result": {"total": %d, "num_after_truncation": %d, "num_filtered": %d, "result": [`, n, n, matched)
	out.Write(body.Bytes())
	out.WriteString(`], "partial_failure_warning": "", "warnings": null}}}`)
	writeJSON(w, http.StatusOK, out.Bytes())
}

// matches applies Ray's filter semantics: strings compare case-insensitively,
// booleans accept true/false/1/0.
func matches(col func(string) (string, bool), filters []filter) bool {
	for _, f := range filters {
		have, isBool := col(f.key)
		want := f.value
		if isBool {
			switch strings.ToLower(want) {
			case "1", "true":
				want = "true"
			case "0", "false":
				want = "false"
			}
		}
		eq := strings.EqualFold(have, want)
		if (f.op == "=") != eq {
			return false
		}
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// pySet formats column names like Python prints a set of strings.
func pySet(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = "'" + c + "'"
	}
	return "{" + strings.Join(q, ", ") + "}"
}
