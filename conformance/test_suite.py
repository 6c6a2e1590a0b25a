"""Every registered check as one pytest item; the plugin does the rest."""
import pytest

from conformance import registry
from conformance.plugin import judge

CHECK_IDS = sorted(registry.load_all())


@pytest.mark.conformance_check
@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_check(check_id, conformance_run, request):
    judge(conformance_run, check_id, request.node.user_properties)
