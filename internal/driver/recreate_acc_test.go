package driver

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// Guarantee: a group removed while a create waits for it (as the cleanup of
// a killed earlier run removes the group the relaunched run adopted) is
// created again; the create ends as it would have (here: never fits) rather
// than with an internal error, and its failure cleanup leaves no group.
func TestAccDriverRecreatesGroupRemovedDuringWait(t *testing.T) {
	e := newAccEnv(t)
	spec := e.neverFits(20)
	name := spec.Groups[0].Name

	var phases []string
	// OnProgress runs on this goroutine; the driver keeps waiting in Ray
	// while the removal runs.
	opts := RunOptions{PollInterval: 100 * time.Millisecond, OnProgress: func(p Progress) {
		if p.Phase == "waiting" && !slices.Contains(phases, "waiting") {
			plainray.RemoveGroups(t, e.ns, name)
		}
		phases = append(phases, p.Phase)
	}}
	_, err := Run(context.Background(), e.client, e.python, spec, opts)
	if !slices.Contains(phases, "waiting") {
		t.Fatalf("the driver never reported waiting; err = %v", err)
	}
	var de *contract.DriverError
	if !errors.As(err, &de) || (de.Kind != contract.KindTimeout && de.Kind != contract.KindInfeasible) {
		t.Fatalf("err = %v, want the never-fitting group's timeout or infeasible error", err)
	}
	if !slices.Contains(phases, "recreated") {
		t.Fatalf("phases %v: the removed group was not created again", phases)
	}
	if live := e.livePGs(t); len(live) != 0 {
		t.Fatalf("groups left after the failed create: %v", mapKeys(live))
	}
}
