package session

import "testing"

// A cluster in state is replaced for its namespace, its recorded drift, a
// changed shape, or an excluded node it holds; the excluded node is looked
// at only when nothing else replaces it.
func TestCompareWithState(t *testing.T) {
	d := &Session{Namespace: "ns"}
	held := StateComparison{Name: "vc", Namespace: "ns", Held: []string{"a", "b"}, Exclude: map[string]bool{"b": true}, ExcludeKnown: true}
	for _, c := range []struct {
		name  string
		c     StateComparison
		attrs []string
	}{
		{"unchanged", StateComparison{Name: "vc", Namespace: "ns"}, nil},
		{"other namespace", StateComparison{Name: "vc", Namespace: "old"}, []string{AttrNamespace}},
		{"drift", StateComparison{Name: "vc", Namespace: "ns", Drift: []GroupDrift{{"vc-node0", "removed"}}}, []string{AttrPlacementGroups}},
		{"drift only on groups the resize removes", StateComparison{Name: "vc", Namespace: "ns", Drift: []GroupDrift{{"vc-node2", "MISSING"}},
			Removing: []string{"vc-node2"}}, nil},
		{"drift on a kept group of a resize", StateComparison{Name: "vc", Namespace: "ns", Drift: []GroupDrift{{"vc-node0", "MISSING"}, {"vc-node2", "MISSING"}},
			Removing: []string{"vc-node2"}}, []string{AttrPlacementGroups}},
		{"shape", StateComparison{Name: "vc", Namespace: "ns", ShapeChanged: true}, []string{""}},
		{"excluded node held", held, []string{"selected_node_ids"}},
		{"excluded node, already replacing", func() StateComparison { c := held; c.Replacing = true; return c }(), nil},
		{"excluded node not known yet", func() StateComparison { c := held; c.ExcludeKnown = false; return c }(), nil},
	} {
		got := d.CompareWithState(c.c)
		var attrs []string
		for _, r := range got {
			attrs = append(attrs, r.Attribute)
		}
		if len(attrs) != len(c.attrs) || (len(attrs) > 0 && attrs[0] != c.attrs[0]) {
			t.Errorf("%s: replacements %+v, want attributes %q", c.name, got, c.attrs)
		}
	}
}
