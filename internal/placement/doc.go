// Package placement is where a virtual cluster is placed, free of the
// Terraform framework: the live check a plan and a create both run
// (CheckLive), the create request with its ownership and record template
// (CreateRequest), and the apply-time loop that chooses nodes, runs the
// driver and, after a lost race for nodes, chooses again or queues (Place).
// Problems come back as clusterspec.Issue, which the resource turns into
// diagnostics; bench drives the same functions, so its rows measure the
// code users run.
package placement
