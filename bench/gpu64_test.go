package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSegmentSpecAndHCL(t *testing.T) {
	for _, l := range []Layout{LayoutUnified, LayoutPerNode} {
		spec := SegmentSpec("bench-x", 64, l)
		if issues := spec.Validate(); len(issues) != 0 {
			t.Fatalf("%s: spec does not validate: %+v", l, issues)
		}
		hcl := wideHCL(spec)
		for _, want := range []string{"bundle_ct_per_node_list = [8, 8, 8, 8, 8, 8, 8, 8]", "num_gpus_per_node       = 8",
			"segment_size             = 2", "select_nodes             = true", `pinning                  = "domain"`} {
			if !strings.Contains(hcl, want) {
				t.Errorf("%s: HCL lacks %q:\n%s", l, want, hcl)
			}
		}
		if got := strings.Contains(hcl, "use_unified_pg"); got != (l == LayoutUnified) {
			t.Errorf("%s: use_unified_pg in HCL = %v:\n%s", l, got, hcl)
		}
	}
	plain := wideHCL(wideSpec("bench-y", FloorBundles, LayoutUnified))
	if strings.Contains(plain, "segment_size") || !strings.Contains(plain, "[8, 8]") {
		t.Errorf("floor cluster HCL:\n%s", plain)
	}
}

func TestPrintApplyFloor(t *testing.T) {
	f := FloorSample{Apply: CLIPhases{Wall: 2 * time.Second}, EmptyJob: time.Second,
		Cold: BaselineTimes{Startup: 100 * time.Millisecond, Import: 0.3, Init: 0.1, Ready: 0.2}}
	if got := f.Floor(); got != 1700*time.Millisecond {
		t.Fatalf("floor = %v", got)
	}
	var out bytes.Buffer
	printApplyFloor(&out, []FloorSample{f})
	// no plain probe measured: floor + probe is the floor
	if flat := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(flat,
		"| 16 | 1 | 2.000 | 1.700 | 1.18 (1.18-1.18) | 1.700 | 1.18 (1.18-1.18) | <= 1.2x floor + probe | met |") {
		t.Errorf("floor row:\n%s", out.String())
	}
}
