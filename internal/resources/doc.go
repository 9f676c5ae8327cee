// Package resources is the Terraform face of the provider: the
// ray_virtual_cluster and ray_namespace_quota resources, the
// ray_virtual_cluster list resource and the ray_virtual_cluster and
// ray_cluster_topology data sources. It holds schemas, the conversion
// between framework values and the plain values of the packages that
// decide (session, placement, planning, drift, record, clusterspec), and
// the mapping of their findings to diagnostics. It reaches Ray only
// through session; plans and reads run under session.ReadOnly.
package resources
