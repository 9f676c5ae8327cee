// Package vcluster owns the virtual-cluster contract shared by the Terraform
// resource, the embedded Python driver and the benchmarks: its constants and
// defaults, the Spec and its validation, the placement groups a Spec asks
// for, the driver's request and result (the JSON wire format of driver.py),
// the placement a result describes, the live snapshot and capacity view,
// drift comparison, import shape inference and the explanation of why a
// cluster does not fit.
//
// It imports no Terraform framework code; internal/topology provides the
// pure reference maths (segments, ordering, ports, CheckPlacement).
package vcluster
