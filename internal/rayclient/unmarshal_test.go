package rayclient

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	fastjson "github.com/goccy/go-json"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// unmarshal must decode exactly what encoding/json decodes, and fail with
// encoding/json's error, on Ray's captured answers and on broken ones.
func TestUnmarshalMatchesEncodingJSON(t *testing.T) {
	rows := nodesBody[strings.Index(nodesBody, `[`)+1 : strings.LastIndex(nodesBody, `]`)]
	manyNodes := strings.Replace(nodesBody, rows, strings.TrimSuffix(strings.Repeat(rows+", ", 500), ", "), 1)
	type decodeInto func() any
	nodes := func() any { return new(stateEnvelope[raystate.Node]) }
	groups := func() any { return new(stateEnvelope[raystate.PlacementGroup]) }
	job := func() any { return new(JobDetails) }
	jobs := func() any { return new([]JobDetails) }
	version := func() any { return new(Version) }
	cases := []struct {
		name string
		body string
		into decodeInto
	}{
		{"nodes", nodesBody, nodes},
		{"1000 nodes", manyNodes, nodes},
		{"placement groups", pgBody, groups},
		{"job", jobBody, job},
		{"job list", jobListBody, jobs},
		{"version", versionBody, version},
		{"truncated", nodesBody[:len(nodesBody)/2], nodes},
		{"trailing text", nodesBody + " x", nodes},
		{"html", "<html>502</html>", nodes},
		{"string for a bool", `{"result": "yes"}`, nodes},
		{"string for a float", strings.Replace(nodesBody, `"GPU": 4.0`, `"GPU": "four"`, 1), nodes},
		{"number for a string", `{"ray_version": 2}`, version},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fast, std := tc.into(), tc.into()
			errFast, errStd := unmarshal([]byte(tc.body), fast), json.Unmarshal([]byte(tc.body), std)
			if (errFast == nil) != (errStd == nil) || (errStd != nil && errFast.Error() != errStd.Error()) {
				t.Fatalf("error %v, encoding/json says %v", errFast, errStd)
			}
			if errStd == nil && !reflect.DeepEqual(fast, std) {
				t.Errorf("decoded differently from encoding/json:\n%+v\n%+v", fast, std)
			}
			if errStd == nil && fastjson.Unmarshal([]byte(tc.body), tc.into()) != nil {
				t.Error("go-json fails where encoding/json does not: every read would decode twice")
			}
		})
	}
}
