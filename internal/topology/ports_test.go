package topology

import (
	"errors"
	"reflect"
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

func TestDefaultPortRanges(t *testing.T) {
	got := DefaultPortRanges()
	var names []string
	for _, r := range got {
		names = append(names, r.Name)
		if err := r.Range.Validate(); err != nil || r.Description == "" {
			t.Errorf("%s: %v", r.Name, err)
		}
	}
	if !reflect.DeepEqual(names, []string{"master", "generation", "gym", "vllm"}) {
		t.Fatal(names)
	}
	want := []PortRange{{1400, 1999}, {3000, 4999}, {5000, 5999}, {7000, 9000}}
	for i, r := range got {
		if r.Range != want[i] {
			t.Errorf("%s = %v, want %v", r.Name, r.Range, want[i])
		}
		for j := i + 1; j < len(got); j++ {
			if r.Range.Overlaps(got[j].Range) {
				t.Errorf("%s overlaps %s", r.Name, got[j].Name)
			}
		}
	}
}
