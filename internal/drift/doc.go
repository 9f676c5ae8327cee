// Package drift compares Ray's live placement groups with a cluster's
// declaration and record: the one rule for whether a live group matches
// what was recorded of it (MatchRecorded; amounts equal within Ray's unit,
// SameResources), and how each wanted group drifted (CompareGroups,
// CompareLive), which the resource's read turns into a replace.
//
// It does no I/O: it reads the groups internal/liveview fetched.
package drift
