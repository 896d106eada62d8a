"""Kafka's authorization rule and ACL znode JSON, by table."""

import json

import pytest

from pylog.security.acl import (AclBinding, AclEntry, BindingFilter, ResourcePattern, authorize, authorize_any,
                                entries_from_json, entries_to_json)


def b(rtype, name, principal, op, perm="ALLOW", pattern="LITERAL", host="*"):
    return AclBinding(ResourcePattern(rtype, name, pattern), AclEntry(principal, host, op, perm))


ACLS = [
    b("TOPIC", "orders", "User:alice", "WRITE"),
    b("TOPIC", "logs-", "User:bob", "READ", pattern="PREFIXED"),
    b("TOPIC", "logs-secret", "User:bob", "READ", "DENY"),
    b("TOPIC", "*", "User:carol", "DESCRIBE"),
    b("TOPIC", "pub", "User:*", "READ"),
    b("TOPIC", "hosty", "User:dave", "ALL", host="10.0.0.1"),
    b("CLUSTER", "kafka-cluster", "User:ops", "ALTER_CONFIGS"),
]


@pytest.mark.parametrize("principal,host,op,rtype,name,expected", [
    ("User:alice", "1.2.3.4", "WRITE", "TOPIC", "orders", True),
    ("User:alice", "1.2.3.4", "DESCRIBE", "TOPIC", "orders", True),  # implied by WRITE
    ("User:alice", "1.2.3.4", "READ", "TOPIC", "orders", False),
    ("User:bob", "h", "READ", "TOPIC", "logs-app", True),  # prefixed
    ("User:bob", "h", "READ", "TOPIC", "logs-secret", False),  # DENY wins over the prefixed ALLOW
    ("User:bob", "h", "READ", "TOPIC", "other", False),  # no ACL at all: closed by default
    ("User:carol", "h", "DESCRIBE", "TOPIC", "anything", True),  # wildcard resource
    ("User:eve", "h", "READ", "TOPIC", "pub", True),  # wildcard principal
    ("User:dave", "10.0.0.1", "DELETE", "TOPIC", "hosty", True),
    ("User:dave", "10.0.0.2", "DELETE", "TOPIC", "hosty", False),  # host must match
    ("User:ops", "h", "DESCRIBE_CONFIGS", "CLUSTER", "kafka-cluster", True),  # implied by ALTER_CONFIGS
    ("User:ops", "h", "ALTER", "CLUSTER", "kafka-cluster", False),
])
def test_authorize(principal, host, op, rtype, name, expected):
    assert authorize(ACLS, principal, host, op, rtype, name) is expected


def test_super_users_and_allow_everyone_if_no_acl_found():
    assert authorize(ACLS, "User:admin", "h", "DELETE", "TOPIC", "orders", frozenset({"User:admin"}))
    assert authorize(ACLS, "User:x", "h", "READ", "GROUP", "no-acls", allow_if_no_acl=True)
    assert not authorize(ACLS, "User:x", "h", "READ", "TOPIC", "no-acls", allow_if_no_acl=True)  # "*" ACLs count
    assert not authorize(ACLS, "User:x", "h", "READ", "TOPIC", "orders", allow_if_no_acl=True)


def test_znode_json_is_kafkas():
    data = entries_to_json([AclEntry("User:alice", "*", "IDEMPOTENT_WRITE", "ALLOW"),
                            AclEntry("User:bob", "*", "READ", "DENY")])
    assert json.loads(data) == {"version": 1, "acls": [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "IdempotentWrite", "host": "*"},
        {"principal": "User:bob", "permissionType": "Deny", "operation": "Read", "host": "*"}]}
    assert entries_from_json(data) == {AclEntry("User:alice", "*", "IDEMPOTENT_WRITE", "ALLOW"),
                                       AclEntry("User:bob", "*", "READ", "DENY")}
    with pytest.raises(ValueError):
        entries_from_json(b'{"version":1}')


def test_filters_and_text():
    assert [x for x in ACLS if BindingFilter("TOPIC", "logs-app", "MATCH").matches(x)] == [ACLS[1], ACLS[3]]
    assert [x for x in ACLS if BindingFilter(principal="User:ops").matches(x)] == [ACLS[6]]
    assert str(ACLS[0].pattern) == "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)"
    assert str(ACLS[0].entry) == "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)"


@pytest.mark.parametrize("acls, expected", [
    ([], False),                                                             # no ACL of the type: denied
    ([b("TOPIC", "t", "User:alice", "WRITE")], True),                        # WRITE on one topic is enough
    ([b("TOPIC", "t", "User:alice", "READ")], False),
    ([b("TOPIC", "t", "User:bob", "WRITE")], False),
    ([b("TOPIC", "pre", "User:*", "ALL", pattern="PREFIXED")], True),
    ([b("TOPIC", "t", "User:alice", "WRITE"), b("TOPIC", "*", "User:alice", "WRITE", "DENY")], False),
    ([b("TOPIC", "pre-t", "User:alice", "WRITE"), b("TOPIC", "pre", "User:alice", "WRITE", "DENY", "PREFIXED")], False),
    ([b("TOPIC", "t", "User:alice", "WRITE"), b("TOPIC", "u", "User:alice", "WRITE", "DENY")], True),
])
def test_authorize_by_resource_type(acls, expected):
    """Kafka's authorizeByResourceType, which lets InitProducerId through for WRITE on any topic."""
    assert authorize_any(acls, "User:alice", "10.0.0.1", "WRITE", "TOPIC") is expected
    assert authorize_any(acls, "User:admin", "10.0.0.1", "WRITE", "TOPIC", frozenset({"User:admin"})) is True
