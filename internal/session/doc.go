// Package session is one configured provider's connection to Ray, created
// once per provider configuration and handed to every resource and data
// source: the reads shared within the process (group list and snapshot,
// Ray version, ownership and quota notes, the first read Ray left
// unanswered), the per-process ledger of what planned and created clusters
// claim (names, ports, capacity, chosen nodes), the driver runs (Run,
// PlacementEnv) and the wording of failed calls to the dashboard. It takes
// and returns plain Go values; the framework is the resources package's.
package session
