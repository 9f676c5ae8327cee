// Package clusterspectest holds the specs and topologies the tests of the
// pure packages share (the local test cluster's nodes, a valid spec, a
// selecting spec, a labelled spec, a spec at scale). Only tests import it.
package clusterspectest
