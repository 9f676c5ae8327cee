// Package raystate holds the rows of Ray's state API that the provider reads
// (Node, PlacementGroup and its Bundle, with their state constants), as plain
// data: rayclient decodes answers into them, and the pure packages (clusterspec,
// record, contract, drift, planning) read them without importing the HTTP client.
package raystate
