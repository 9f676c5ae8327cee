// Package clusterspec is the declaration of a virtual cluster and its rules:
// the constants and defaults of the resource (Defaults), the Spec and its
// validation (Validate, one Issue per mistake), the placement groups a Spec
// asks for (Groups) with their label selectors and node pins, where node
// domains and ranks come from (TopologySource), the label-selector syntax Ray
// accepts, and the Ray versions each feature needs (VersionIssues).
//
// It does no I/O and imports no Terraform framework code; internal/topology
// provides the reference maths it builds on.
package clusterspec
