package topology

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestPortRangeValidate(t *testing.T) {
	tests := []struct {
		r   PortRange
		msg string
	}{
		{PortRange{1400, 1999}, ""},
		{PortRange{1, 65536}, ""},
		{PortRange{65535, 65536}, ""},
		{PortRange{2000, 1500}, "invalid argument: port_range_low (2000) must be lower than port_range_high (1500)"},
		{PortRange{1500, 1500}, "invalid argument: port_range_low (1500) must be lower than port_range_high (1500)"},
		{PortRange{0, 100}, "invalid argument: port_range_low (0) must be >= 1"},
		{PortRange{-5, 100}, "invalid argument: port_range_low (-5) must be >= 1"},
		{PortRange{100, 65537}, "invalid argument: port_range_high (65537) must be <= 65536 (the range is exclusive of port_range_high)"},
	}
	for _, tc := range tests {
		err := tc.r.Validate()
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%v: unexpected %v", tc.r, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidArgument) || err.Error() != tc.msg {
			t.Errorf("%v: err = %v, want %q", tc.r, err, tc.msg)
		}
	}
}

func TestPortRangeOps(t *testing.T) {
	r := PortRange{1400, 1999}
	if r.Size() != 599 || (PortRange{5, 3}).Size() != 0 {
		t.Fatal("Size")
	}
	if !r.Contains(1400) || !r.Contains(1998) || r.Contains(1999) || r.Contains(1399) {
		t.Fatal("Contains must be half-open")
	}
	if r.String() != "[1400, 1999)" {
		t.Fatal(r.String())
	}
	overlaps := []struct {
		a, b PortRange
		want bool
	}{
		{PortRange{1, 10}, PortRange{10, 20}, false},
		{PortRange{1, 11}, PortRange{10, 20}, true},
		{PortRange{10, 20}, PortRange{1, 11}, true},
		{PortRange{1, 100}, PortRange{10, 20}, true},
		{PortRange{10, 10}, PortRange{1, 100}, false},
		{PortRange{3000, 4999}, PortRange{4999, 5999}, false},
	}
	for _, tc := range overlaps {
		if tc.a.Overlaps(tc.b) != tc.want {
			t.Errorf("%v.Overlaps(%v) != %v", tc.a, tc.b, tc.want)
		}
	}
}

func TestVLLMEnginePortRange(t *testing.T) {
	if got := VLLMEnginePortRange(0); got != (PortRange{7000, 7100}) {
		t.Fatal(got)
	}
	if got := VLLMEnginePortRange(7); got != (PortRange{7700, 7800}) {
		t.Fatal(got)
	}
	if VLLMEnginePortRange(19).High != DefaultVLLMPortRangeHigh {
		t.Fatal("20 engine blocks fill the vLLM band")
	}
}

// portRangeVectors is python/tests/testdata/port_ranges.json: the reference's
// bands, shared with the Python package's tests so both tables stay equal.
type portRangeVectors struct {
	Revision       string `json:"nemo_rl_commit"`
	PortsPerEngine int    `json:"vllm_ports_per_engine"`
	Ranges         []struct {
		Name      string `json:"name"`
		Low, High int
		Within    string `json:"within"`
	} `json:"ranges"`
}

func TestDefaultPortRanges(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "python", "tests", "testdata", "port_ranges.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want portRangeVectors
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if want.Revision != ReferenceRevision || want.PortsPerEngine != DefaultVLLMPortsPerEngine {
		t.Fatalf("testdata follows %s (%d ports per engine), the code %s (%d)", want.Revision, want.PortsPerEngine, ReferenceRevision, DefaultVLLMPortsPerEngine)
	}
	got := DefaultPortRanges()
	if len(got) != len(want.Ranges) {
		t.Fatalf("%d bands, testdata has %d", len(got), len(want.Ranges))
	}
	byName := map[string]PortRange{}
	for i, r := range got {
		w := want.Ranges[i]
		if r.Name != w.Name || r.Range != (PortRange{w.Low, w.High}) || r.Within != w.Within {
			t.Errorf("band %d = %s %v within %q, testdata %s [%d, %d) within %q", i, r.Name, r.Range, r.Within, w.Name, w.Low, w.High, w.Within)
		}
		if err := r.Range.Validate(); err != nil || r.Description == "" {
			t.Errorf("%s: %v", r.Name, err)
		}
		byName[r.Name] = r.Range
	}
	// Top-level bands are disjoint; a nested band lies inside its parent.
	for i, r := range got {
		if r.Within != "" {
			parent, ok := byName[r.Within]
			if !ok || r.Range.Low < parent.Low || r.Range.High > parent.High {
				t.Errorf("%s %v is not inside %s %v", r.Name, r.Range, r.Within, parent)
			}
			continue
		}
		for _, o := range got[i+1:] {
			if o.Within == "" && r.Range.Overlaps(o.Range) {
				t.Errorf("%s overlaps %s", r.Name, o.Name)
			}
		}
	}
}
