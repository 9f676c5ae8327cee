import json

import pytest
from fakes import record_doc

from raytf_attach import RecordInvalidError, UnsupportedSchemaVersionError, parse_record, record_key
from raytf_attach.record import SCHEMA_VERSION


def parse(doc):
    return parse_record(json.dumps(doc))


def test_parses_per_node_record():
    rec = parse(record_doc())
    assert [g.name for g in rec.groups] == ["train-node0", "train-node1"]
    assert [b.rank for b in rec.bundles] == [0, 1, 2, 3]
    assert rec.bundles[1].gpu_id == 1 and rec.bundles[1].node_ip == "127.0.0.11"
    assert rec.bundle_ct_per_node_list == (2, 2)
    assert rec.segment_size is None and rec.node_resource_constraints is None


def test_key_layout():
    assert record_key("terraform-ray", "train") == b"vc/terraform-ray/train"


def test_unknown_keys_ignored_and_null_gpu_ids():
    doc = record_doc(use_gpus=False)
    doc["future_field"] = {"x": 1}
    doc["bundles"][0]["future_bundle_field"] = 3
    rec = parse(doc)
    assert all(b.gpu_id is None for b in rec.bundles)


def test_newer_schema_version_is_refused():
    doc = record_doc()
    doc["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(UnsupportedSchemaVersionError, match=f"schema_version {SCHEMA_VERSION + 1} is newer"):
        parse(doc)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("groups"), "missing field 'groups'"),
    (lambda d: d.__setitem__("master_port", "1423"), "'master_port' must be int"),
    (lambda d: d.__setitem__("num_gpus_per_node", True), "'num_gpus_per_node' must be int"),
    (lambda d: d["bundles"][2].pop("node_id"), r"bundles\[2\]: missing field 'node_id'"),
    (lambda d: d["bundles"].reverse(), "rank order"),
    (lambda d: d.__setitem__("sorted_bundle_indices", [1, 0, 2, 3]), "disagree"),
    (lambda d: d.__setitem__("bundle_ct_per_node_list", [2, 1]), "sums to 3"),
    (lambda d: d["bundles"].pop(), "3 bundles listed"),
    (lambda d: d["bundles"][3].__setitem__("placement_group", "other"), "names group 'other'"),
    (lambda d: d.__setitem__("port_range_high", 1400), "empty port range"),
    (lambda d: d.__setitem__("schema_version", 0), "must be >= 1"),
])
def test_bad_records_name_the_problem(mutate, message):
    doc = record_doc()
    mutate(doc)
    with pytest.raises(RecordInvalidError, match=message):
        parse(doc)


def test_not_json():
    with pytest.raises(RecordInvalidError, match="not valid UTF-8 JSON"):
        parse_record(b"{nope")
    with pytest.raises(RecordInvalidError, match="must be a JSON object"):
        parse_record(b"[1]")


def test_team_note_example_shape():
    # testdata/record_v1.json: a complete record in the shape the provider's driver writes (TEAM.md).
    from pathlib import Path

    raw = (Path(__file__).parent / "testdata" / "record_v1.json").read_bytes()
    rec = parse_record(raw)
    assert rec.master_port == rec.bundles[0].port == 1423
    assert [g.node_index for g in rec.groups] == [0, 1]


def test_reads_v1_and_v2_records():
    # testdata/record_v2.json is record_v1.json with the declaration schema 2
    # adds; internal/record reads the same two files (TestManifestVersions).
    from pathlib import Path

    v1 = parse_record((Path(__file__).parent / "testdata" / "record_v1.json").read_bytes())
    v2 = parse_record((Path(__file__).parent / "testdata" / "record_v2.json").read_bytes())
    assert (v1.schema_version, v2.schema_version) == (1, 2)
    assert v2.bundles == v1.bundles and v2.groups == v1.groups
    assert v1.segment_size is None and v2.segment_size == 2
