import pytest
from fakes import FakeRay, record_doc

from raytf_attach import GroupNotReadyError, PortUnavailableError, attach


def attached(**kw):
    fake = FakeRay(record_doc(**kw))
    return fake, attach("train", ray_layer=fake)


def test_master_first_call_returns_recorded_port():
    _, vc = attached()
    assert vc.get_master_address_and_port() == ("127.0.0.11", 1500)


def test_master_ports_unique_per_call():
    _, vc = attached()
    ports = [vc.get_master_address_and_port()[1] for _ in range(5)]
    assert len(set(ports)) == 5
    assert all(1400 <= p < 1999 for p in ports)
    assert vc._allocated_master_ports == set(ports)


def test_master_port_taken_since_apply_is_reprobed():
    fake, vc = attached()
    fake.busy["127.0.0.11"] = {1500, 1400}
    addr, port = vc.get_master_address_and_port()
    assert addr == "127.0.0.11" and port not in (1500, 1400) and 1400 <= port < 1999


def test_unified_master_is_rank_zero_bundle():
    fake, vc = attached(unified=True)
    assert vc.get_master_address_and_port() == ("127.0.0.12", 1500)
    req = fake.probe_calls[-1][0][0]
    assert req.bundle_index == 2 and req.candidate == 1500


def test_bundle_port_recorded_then_fresh():
    _, vc = attached()
    first = vc.get_available_address_and_port(1, 1)
    assert first == ("127.0.0.12", 1503)
    second = vc.get_available_address_and_port(1, 1)
    assert second[0] == "127.0.0.12" and second[1] != 1503


def test_master_and_bundle_ports_do_not_collide():
    _, vc = attached()
    master = vc.get_master_address_and_port()
    rank0 = vc.get_available_address_and_port(0, 0)
    assert master[0] == rank0[0] and master[1] != rank0[1]


def test_batch_in_order_and_unique_per_node():
    fake, vc = attached()
    fake.busy["127.0.0.11"] = {1501}  # rank 1's recorded port was taken since apply
    pairs = [(pg, b) for pg, g in enumerate(vc.get_placement_groups()) for b in range(g.bundle_count)]
    out = vc.get_available_addresses_and_ports_batch(pairs)
    assert [a for a, _ in out] == ["127.0.0.11", "127.0.0.11", "127.0.0.12", "127.0.0.12"]
    assert out[0][1] == 1500 and out[1][1] != 1501 and out[2:] == [("127.0.0.12", 1502), ("127.0.0.12", 1503)]
    again = vc.get_available_addresses_and_ports_batch(pairs)
    seen = {}
    for addr, port in out + again:
        assert port not in seen.get(addr, set()), (addr, port)
        seen.setdefault(addr, set()).add(port)


def test_batch_collisions_are_reprobed():
    # Both probes on one node pick the same lowest free port; the second must retry.
    fake, vc = attached()
    fake.busy["127.0.0.11"] = {1500, 1501}
    out = vc.get_available_addresses_and_ports_batch([(0, 0), (0, 1)])
    assert len({p for _, p in out}) == 2
    assert len(fake.probe_calls) == 2 and fake.probe_calls[1][0][0].excluded


def test_batch_size_passed_through_and_validated():
    fake, vc = attached()
    vc.get_available_addresses_and_ports_batch([(0, 0)], batch_size=7)
    assert fake.probe_calls[-1][1] == 7
    with pytest.raises(ValueError, match="batch_size"):
        vc.get_available_addresses_and_ports_batch([(0, 0)], batch_size=0)


def test_unified_ignores_pg_idx_like_reference():
    _, vc = attached(unified=True)
    assert vc.get_available_address_and_port(5, 0)[0] == "127.0.0.11"


def test_bad_indices():
    _, vc = attached()
    with pytest.raises(ValueError, match="pg_idx 2"):
        vc.get_available_address_and_port(2, 0)
    with pytest.raises(ValueError, match="bundle_idx 2"):
        vc.get_available_address_and_port(0, 2)


def test_range_exhausted():
    fake, vc = attached()
    fake.busy["127.0.0.11"] = set(range(1400, 1999))
    with pytest.raises(PortUnavailableError, match=r"no free port in \[1400, 1999\) on 127.0.0.11"):
        vc.get_master_address_and_port()


def test_probe_timeout_while_rescheduling():
    fake, vc = attached()
    fake.hang.add("train-node0")
    fake.live("train-node0").state = "RESCHEDULING"
    with pytest.raises(GroupNotReadyError, match="RESCHEDULING"):
        vc.get_available_address_and_port(0, 0)


def test_probe_timeout_on_created_group():
    fake, vc = attached()
    fake.hang.add("train-node1")
    with pytest.raises(PortUnavailableError, match="did not finish"):
        vc.get_available_address_and_port(1, 0)


def test_probe_failure_is_wrapped():
    fake, vc = attached()

    def boom(*a, **k):
        raise RuntimeError("worker died")

    fake.probe_ports = boom
    with pytest.raises(PortUnavailableError, match="worker died"):
        vc.get_master_address_and_port()
