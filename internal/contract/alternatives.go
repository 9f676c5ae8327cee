package contract

import (
	"errors"
	"fmt"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Alternative is another choice of nodes a select_nodes create may take in
// the same driver run when another cluster reserved its chosen nodes first:
// the groups, record and reservation ask of the same cluster on those
// nodes. It saves the lost race a second driver job.
type Alternative struct {
	Groups   []RequestGroup                `json:"groups"`
	Manifest *record.Manifest              `json:"manifest"`
	Nodes    map[string]topology.Resources `json:"nodes"`
}

// WithAlternatives returns req (a create of spec's first choice, Owned)
// with the alternatives of the same cluster on other nodes, tried in order.
func (r Request) WithAlternatives(specs []clusterspec.Spec, owner, version string) Request {
	for _, s := range specs {
		alt := RequestFor(s, ActionCreate)
		manifest := record.NewManifest(s, owner, version, record.Placement{})
		r.Alternatives = append(r.Alternatives, Alternative{Groups: alt.Groups, Manifest: &manifest, Nodes: s.NodeAsk()})
	}
	return r
}

// validateAlternatives checks that only a create of chosen nodes falls back
// on alternatives, each of the same groups, with its record and ask.
func (r Request) validateAlternatives() error {
	if len(r.Alternatives) == 0 {
		return nil
	}
	if r.Action != ActionCreate || r.Ownership == nil || r.Ownership.Reservation == nil || r.Ownership.Reservation.Nodes == nil {
		return errors.New("driver request: alternatives are for a create of chosen nodes (select_nodes)")
	}
	for i, a := range r.Alternatives {
		if a.Manifest == nil || a.Nodes == nil || len(a.Groups) != len(r.Groups) {
			return fmt.Errorf("driver request: alternatives[%d] lacks its record, its nodes or groups", i)
		}
		for j, g := range a.Groups {
			if g.Name != r.Groups[j].Name {
				return fmt.Errorf("driver request: alternatives[%d] group %q differs from %q", i, g.Name, r.Groups[j].Name)
			}
			if err := g.validateForCreate(); err != nil {
				return err
			}
		}
	}
	return nil
}
