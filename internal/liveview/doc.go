// Package liveview is the provider's only reader of Ray's live state for
// planning and reads: the alive nodes and the placement groups that are not
// removed, fetched through rayclient (FetchSnapshot, ListAliveNodes,
// ListLiveGroups), and LiveView, which shares one group list and one
// snapshot across a provider process.
package liveview
