"""Issue 17 point 5: without authorizer.class.name the ACL APIs answer SECURITY_DISABLED, as Kafka does.

Before, the broker did not register them and stock admin clients reported "not supported by broker".
"""

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                   ResourcePatternType, ResourceType)
from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
                         ResourcePattern, ResourcePatternFilter)
from kafka.admin import ResourceType as KpResourceType
from kafka.errors import SecurityDisabledError

pytestmark = pytest.mark.integration


def test_confluent_acl_apis_report_security_disabled(cluster):
    a = AdminClient({"bootstrap.servers": cluster.bootstrap})
    match_all = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                 AclPermissionType.ANY)
    # librdkafka drops DescribeAcls' top-level error: the user sees no bindings, as against Kafka.
    assert a.describe_acls(match_all).result(30) == []

    binding = AclBinding(ResourceType.TOPIC, "t", ResourcePatternType.LITERAL, "User:alice", "*",
                         AclOperation.WRITE, AclPermissionType.ALLOW)
    with pytest.raises(KafkaException) as info:
        a.create_acls([binding])[binding].result(30)
    assert info.value.args[0].name() == "SECURITY_DISABLED"
    assert "No Authorizer is configured" in info.value.args[0].str()
    with pytest.raises(KafkaException) as info:
        a.delete_acls([match_all])[match_all].result(30)
    assert info.value.args[0].name() == "SECURITY_DISABLED"


def test_kafka_python_acl_apis_report_security_disabled(cluster):
    k = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
    try:
        acl_filter = ACLFilter(principal=None, host="*", operation=ACLOperation.ANY,
                               permission_type=ACLPermissionType.ANY,
                               resource_pattern=ResourcePatternFilter(KpResourceType.TOPIC, None,
                                                                      ACLResourcePatternType.ANY))
        with pytest.raises(SecurityDisabledError):
            k.describe_acls(acl_filter)
        acl = ACL("User:alice", "*", ACLOperation.WRITE, ACLPermissionType.ALLOW,
                  ResourcePattern(KpResourceType.TOPIC, "t"))
        result = k.create_acls([acl])
        assert result == {"succeeded": [], "failed": [SecurityDisabledError]}
    finally:
        k.close()
