package resources

import (
	"context"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/driver/drivertest"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// safeEntrypoint is the only shape a driver job's shell command may have:
// the fixed bootstrap with its base85 payload, then the base85 spec. Nothing
// else - in particular no byte of the user's input - may appear in it.
var safeEntrypoint = regexp.MustCompile(`^'python' -c '(import base64,zlib;exec\(zlib\.decompress\(base64\.b85decode\("` +
	drivertest.SpecArgChars + `+"\)\)\))' '(` + drivertest.SpecArgChars + `+)'$`)

var submissionIDRE = regexp.MustCompile(`^raytf_(create|delete|inspect)_[A-Za-z0-9_-]+_0$`)

// fuzzModel builds the resource's Terraform model from fuzz input, the way
// the framework would hand a configuration to the resource.
func fuzzModel(t *testing.T, name string, counts []byte, flags, knobs byte, key string, amount float64, low, high int64, ready string) virtualClusterModel {
	if len(counts) > 32 {
		counts = counts[:32]
	}
	countVals := make([]attr.Value, len(counts))
	for i, c := range counts {
		countVals[i] = types.Int64Value(int64(int8(c))) // negatives too
	}
	m := virtualClusterModel{
		Name:                     types.StringValue(name),
		BundleCtPerNodeList:      types.ListValueMust(types.Int64Type, countVals),
		UseGPUs:                  types.BoolValue(flags&1 != 0),
		NumGPUsPerNode:           types.Int64Value(int64(knobs & 0x0f)),
		MaxColocatedWorkerGroups: types.Int64Value(int64(knobs>>4) - 1),
		UseUnifiedPG:             types.BoolValue(flags&2 != 0),
		PortRangeLow:             types.Int64Value(low),
		PortRangeHigh:            types.Int64Value(high),
		ReadyTimeout:             goDuration(ready),
		SegmentSize:              types.Int64Null(),
		NodeResourceConstraints:  types.ListNull(types.MapType{ElemType: types.Float64Type}),
	}
	strategies := []string{"", "PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD", key}
	if s := strategies[int(flags>>5)%len(strategies)]; s != "" {
		m.PlacementGroupStrategy = types.StringValue(s)
	} else {
		m.PlacementGroupStrategy = types.StringNull()
	}
	if flags&4 != 0 {
		m.SegmentSize = types.Int64Value(int64(flags>>3&3) - 1)
	}
	if flags&8 != 0 {
		mt := types.MapType{ElemType: types.Float64Type}
		var maps []attr.Value
		n := len(counts)
		if flags&16 != 0 {
			n++ // wrong length
		}
		for i := 0; i < n; i++ {
			elems := map[string]attr.Value{}
			if i%2 == 0 {
				elems[key] = types.Float64Value(amount)
				elems["nvlink_domain_"+name] = types.Float64Value(0.001)
			}
			mv, d := types.MapValue(types.Float64Type, elems)
			if d.HasError() {
				t.Fatalf("map value: %v", d)
			}
			maps = append(maps, mv)
		}
		m.NodeResourceConstraints = types.ListValueMust(mt, maps)
	}
	return m
}

var refBootstrap = func() string {
	ep, err := driver.Entrypoint(clusterspec.DefaultPythonExecutable, contract.NewRequest(contract.ActionDelete, "", []clusterspec.GroupRequest{{Name: "x"}}, false, topology.PortRange{}, 0))
	if err != nil {
		panic(err)
	}
	return safeEntrypoint.FindStringSubmatch(ep)[1]
}()

// FuzzDriverEntrypoint drives arbitrary cluster shapes through the
// HCL-to-request translation (model -> clusterSpec -> driverSpec ->
// driver.Entrypoint) and checks that nothing panics, that the shell command
// always has the fixed safe shape (every user-supplied byte is inside the
// base85 spec argument), that the spec argument carries the request intact,
// and that submission ids stay URL- and shell-safe. Static validation is
// not applied first: the entrypoint must be safe even for a configuration
// the plan would have rejected.
func FuzzDriverEntrypoint(f *testing.F) {
	type seed struct {
		name             string
		counts           []byte
		flags, knobs     byte
		key              string
		amount           float64
		low, high        int64
		ready, namespace string
	}
	seeds := []seed{
		{"vc", []byte{2, 2}, 1, 0x14, "nvlink_domain_rackA", 0.001, 1400, 1999, "180s", "terraform-ray"},
		{"vc;rm -rf /", []byte{1}, 1, 0x14, "x", 1, 1400, 1999, "60s", "terraform-ray"},
		{"$(whoami)`id`", []byte{1, 0, 3}, 3, 0x18, "topo_rank", 5, 1500, 1600, "1s", "ns"},
		{"it's \"quoted\"", []byte{4}, 0xe9, 0x24, "a'b", 2, 1, 65536, "1h", "o'neil"},
		{"кластер-🚀", []byte{1, 1, 1, 1}, 0x4f, 0x14, "ключ", 0.5, 2000, 1500, "-5s", "пространство"},
		{"", nil, 0, 0, "", 0, 0, 0, "", ""},
		{"\x00\n\r\t\x1b[31m", []byte{0xff, 0x80, 7}, 0xff, 0xff, "\x00", 1e-300, -1, 70000, "soon", "\n"},
		{"a b|c&d>e<f", []byte{1}, 0x0d, 0x1f, "CPU", math.Copysign(0, -1), 1400, 1999, "9999999h", "$(reboot)"},
		{"--help", []byte{8, 8}, 0x23, 0x28, "GPU", -1, 1024, 1025, "2m", "terraform-ray"},
		{strings.Repeat("n", 200), []byte{1}, 1, 0x14, strings.Repeat("k", 300), 1e300, 1400, 1999, "180s", "terraform-ray"},
		{"x", []byte{1}, 0x08, 0x14, "", 1, 1400, 1999, "180s", "terraform-ray"},
		{"\\'\\\"", []byte{2}, 0x29, 0x14, "'\"'\"'", 3, 1400, 1999, "180s", "'"},
	}
	for _, s := range seeds {
		f.Add(s.name, s.counts, s.flags, s.knobs, s.key, s.amount, s.low, s.high, s.ready, s.namespace)
	}
	f.Fuzz(func(t *testing.T, name string, counts []byte, flags, knobs byte, key string, amount float64, low, high int64, ready, namespace string) {
		if math.IsNaN(amount) || math.IsInf(amount, 0) {
			t.Skip("HCL numbers are finite")
		}
		if !utf8.ValidString(name) || !utf8.ValidString(key) || !utf8.ValidString(namespace) || !utf8.ValidString(ready) {
			t.Skip("Terraform strings are valid UTF-8")
		}
		ctx := context.Background()
		m := fuzzModel(t, name, counts, flags, knobs, key, amount, low, high, ready)
		m.Namespace = types.StringValue(namespace)
		spec, known, _ := clusterSpec(ctx, m)
		if !known {
			return
		}
		_ = spec.Validate()
		groups := spec.Groups()
		rt := readyTimeout(m)
		if rt <= 0 {
			t.Fatalf("readyTimeout(%q) = %s, want > 0", ready, rt)
		}
		for _, action := range []string{contract.ActionCreate, contract.ActionDelete, contract.ActionInspect} {
			ds := contract.RequestFor(spec, action)
			if len(ds.Groups) != len(groups) {
				t.Fatalf("%s: driver spec has %d groups, the cluster %d", action, len(ds.Groups), len(groups))
			}
			if ds.ReadyTimeoutSeconds < 1 {
				t.Fatalf("%s: ready_timeout_seconds %d from %s", action, ds.ReadyTimeoutSeconds, rt)
			}
			ep, err := driver.Entrypoint(clusterspec.DefaultPythonExecutable, ds)
			if err != nil {
				if ds.Validate() == nil {
					t.Fatalf("%s: Entrypoint failed for a valid driver spec: %v", action, err)
				}
				continue
			}
			checkEntrypoint(t, action, ep, ds)
			if id := driver.SubmissionID(ds); len(id) > 100 || !submissionIDRE.MatchString(id) {
				t.Fatalf("%s: unsafe submission id %q", action, id)
			}
		}
	})
}

func checkEntrypoint(t *testing.T, action, ep string, ds contract.Request) {
	t.Helper()
	sub := safeEntrypoint.FindStringSubmatch(ep)
	if sub == nil {
		t.Fatalf("%s: entrypoint does not have the safe shape:\n%.300q", action, ep)
	}
	if sub[1] != refBootstrap {
		t.Fatalf("%s: the bootstrap depends on the input", action)
	}
	raw, err := drivertest.DecodeSpecArg(sub[2])
	if err != nil {
		t.Fatalf("%s: spec argument is not base85: %v", action, err)
	}
	var got contract.Request
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%s: spec argument is not the JSON of a spec: %v", action, err)
	}
	wantNS := ds.Namespace
	if got.Action != action || got.Namespace != wantNS || len(got.Groups) != len(ds.Groups) {
		t.Fatalf("%s: spec argument decodes to action %q namespace %q with %d groups, want %q %q %d",
			action, got.Action, got.Namespace, len(got.Groups), action, wantNS, len(ds.Groups))
	}
	for i, g := range got.Groups {
		w := ds.Groups[i]
		if g.Name != w.Name {
			t.Fatalf("%s: group %d name %q arrives as %q", action, i, w.Name, g.Name)
		}
		if len(g.Bundles) != len(w.Bundles) {
			t.Fatalf("%s: group %q has %d bundles, sent %d", action, w.Name, len(g.Bundles), len(w.Bundles))
		}
		for j, b := range g.Bundles {
			for k, v := range w.Bundles[j] {
				if b[k] != v {
					t.Fatalf("%s: group %q bundle %d %q = %v arrives as %v", action, w.Name, j, k, v, b[k])
				}
			}
		}
	}
}

// TestDriverEntrypointSeeds keeps one plain check of the translation in the
// unit tests: a hostile name reaches the driver intact and the shell never.
func TestDriverEntrypointSeeds(t *testing.T) {
	name := `vc'; touch /tmp/pwned; echo '$(id)`
	m := fuzzModel(t, name, []byte{1, 2}, 1, 0x14, "nvlink_domain_rackA", 0.001, 1400, 1999, "30s")
	spec, known, d := clusterSpec(context.Background(), m)
	if !known || d.HasError() {
		t.Fatalf("clusterSpec: known=%v %v", known, d)
	}
	ds := contract.RequestFor(spec, contract.ActionCreate)
	ep, err := driver.Entrypoint(clusterspec.DefaultPythonExecutable, ds)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ep, "touch") || strings.Contains(ep, "$(id)") {
		t.Fatal("user input in the entrypoint")
	}
	checkEntrypoint(t, contract.ActionCreate, ep, ds)
}
