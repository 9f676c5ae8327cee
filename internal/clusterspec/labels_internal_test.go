package clusterspec

import (
	"strings"
	"testing"
)

// Cases taken from the examples in Ray's label_utils.py comments.
func TestLabelSyntaxAsRayAcceptsIt(t *testing.T) {
	for _, k := range []string{"a", "raytf.io/nvlink-domain", "ray.io/node-id", "sub.domain.example/x_y", "123.456/a"} {
		if err := ValidateLabelKey(k); err != nil {
			t.Errorf("key %q rejected: %v", k, err)
		}
	}
	for _, k := range []string{"", "-abc", "abc-", "my@label", "prefix_/a", "sub..domain/", strings.Repeat("a", 64)} {
		if ValidateLabelKey(k) == nil {
			t.Errorf("key %q accepted", k)
		}
	}
	for _, v := range []string{"", "spot", "!GPU", "213521", "in(A123, B456, C789)", "!in(spot, on-demand)", "in(a,b)", "(a, b)", "valid-value"} {
		if why := validateSelectorValue("k", v); why != "" {
			t.Errorf("value %q rejected: %s", v, why)
		}
	}
	for _, v := range []string{"-spot", "spot_", "in()", "in(spot,", "in(H100, TPU!GPU)", "!!!in(H100, TPU)", "in(a,  b)", strings.Repeat("v", 64)} {
		if validateSelectorValue("k", v) == "" {
			t.Errorf("value %q accepted", v)
		}
	}
}
