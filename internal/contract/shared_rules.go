package contract

// SharedRule is a rule that exists in Go and in Python (driverpy, the driver,
// runs in the Ray job; raytf_attach in training code), with the test that keeps
// the copies equal. SharedRules is the one list of them (DESIGN notes refer
// here); TestSharedRulesHaveParityTests checks that every test named exists.
type SharedRule struct {
	Rule   string
	Go     string
	Python string
	// Tests are "path:TestName" (Go) or "path:test_name" (pytest).
	Tests []string
}

// SharedRules lists every rule with a copy in both languages.
var SharedRules = []SharedRule{
	{
		Rule: "request format: fields and their types", Go: "contract.Request", Python: "driverpy/shape.py SHAPE, check_shape",
		Tests: []string{"internal/driver/driverpy/tests/test_shape.py:test_reports_each_wrong_field", "internal/driver/driver_test.go:TestDriverReportsErrorsWithoutRay"},
	},
	{
		Rule: "contract constants the driver gets", Go: "contract.Contract, DriverContract", Python: "driverpy/contract.py Contract (frozen dataclass)",
		Tests: []string{"internal/contract/shared_rules_test.go:TestDriverContractFieldsMatch", "contract_constants_test.go:TestDriverPyHasNoContractConstants"},
	},
	{
		Rule: "node NVLink domain and topo rank, from resources or labels", Go: "clusterspec.TopologySource.Node, ParseRankLabel",
		Python: "driverpy/nodes.py node_topology, rank_from_label",
		Tests:  []string{"internal/driver/topology_parity_test.go:TestDriverTopologyMatchesGo"},
	},
	{
		Rule: "rank order of a unified GPU cluster", Go: "topology.SortBundleIndicesByTopology", Python: "driverpy/record.py topology_order",
		Tests: []string{"internal/driver/topology_parity_test.go:TestDriverRankOrderMatchesGo"},
	},
	{
		Rule: "resource amounts are equal (Ray's unit of 1e-4)", Go: "drift.SameAmount, SameResources",
		Python: "driverpy/groups.py same_amount, same_bundle",
		Tests:  []string{"internal/drift/match_test.go:TestMatchVectors", "internal/driver/topology_parity_test.go:TestDriverMatchRuleMatchesGo"},
	},
	{
		Rule: "a live group matches its record (id, state, bundle count, nodes)", Go: "drift.MatchRecorded",
		Python: "raytf_attach/cluster.py live_mismatches",
		Tests:  []string{"internal/drift/match_test.go:TestMatchVectors", "python/tests/test_live_match.py:test_live_match_vectors"},
	},
	{
		Rule: "the cluster record's format (schema versions 1 and 2)", Go: "record.Manifest, DeclaredSpec",
		Python: "raytf_attach/record.py parse_record",
		Tests: []string{"internal/record/manifest_test.go:TestManifestVersions",
			"internal/resources/virtual_cluster_data_source_test.go:TestVirtualClusterDataSourceFromRecord",
			"python/tests/test_record.py:test_reads_v1_and_v2_records"},
	},
	{
		Rule: "the record's placement: group ids, bundles in rank order, master address and port", Go: "record.NewManifest of contract.NewPlacement",
		Python: "driverpy/record.py placed_record",
		Tests:  []string{"internal/driver/topology_parity_test.go:TestDriverRecordMatchesGo"},
	},
	{
		Rule: "NeMo-RL's port bands", Go: "topology.DefaultPortRanges", Python: "raytf_attach/ports.py PORT_RANGES",
		Tests: []string{"internal/topology/ports_test.go:TestDefaultPortRanges", "python/tests/test_port_bands.py:test_same_table_as_the_provider"},
	},
}
