"""junit.xml: one test case per requirement; MUST failures fail, SHOULD warnings and gaps are visible but skipped."""
import xml.etree.ElementTree as ET

from conformance.reporting import junit
from tests.reports.support import CURL, FAILING_MUST, make_report, should_requirement


def cases(rep):
    root = junit.build(rep)
    return root, {c.get("name").split(" ", 1)[0]: c for c in root.iter("testcase")}


def test_one_case_per_requirement_named_by_id_and_title_classed_by_protocol_and_section():
    rep = make_report()
    root, by_id = cases(rep)
    assert len(by_id) == len(rep["requirements"])
    case = by_id["INV-SEL-001"]
    assert case.get("name").startswith("INV-SEL-001 Streaming is selected by")
    assert case.get("classname") == "invoke.Endpoints.POST_v1_agents_agentId_invoke.Rules_1"
    assert all(c.get("classname") and " " not in c.get("classname") for c in by_id.values())
    assert root.get("failures") == "0" and root.get("errors") == "0"


def test_must_failure_is_a_failure_with_the_curl_line_and_should_is_a_visible_skip():
    should = should_requirement()
    root, by_id = cases(make_report(fail=(FAILING_MUST, should)))
    failure = by_id[FAILING_MUST].find("failure")
    assert failure is not None and failure.get("type") == "MUST" and CURL in failure.text
    warn = by_id[should]
    assert warn.find("failure") is None
    assert warn.find("skipped").get("message").startswith(f"warning: {should} SHOULD")
    assert "expected:" in warn.find("system-err").text
    assert root.get("failures") == "1"


def test_not_assessed_is_skipped_with_the_reason():
    _, by_id = cases(make_report(skip=("INV-SEL-001",)))
    message = by_id["INV-SEL-001"].find("skipped").get("message")
    assert message.startswith("not assessed: ") and "needs --access-token, which was not given" in message


def test_a_run_that_could_not_judge_is_an_error_case(tmp_path):
    rep = make_report(error="interrupted after 5 s (SIGINT)")
    path = junit.write(rep, tmp_path / "junit.xml")
    root = ET.parse(path).getroot()
    run = [c for c in root.iter("testcase") if c.get("name") == "conformance.run"]
    assert run and run[0].find("error").get("message") == "interrupted after 5 s (SIGINT)"
    assert root.get("errors") == "1"


def test_control_bytes_from_a_hostile_server_keep_the_file_well_formed(tmp_path):
    rep = make_report(fail=(FAILING_MUST,))
    for row in rep["requirements"]:
        if row["id"] == FAILING_MUST:
            row["message"] = "got \x00\x1b[31m bytes"
    ET.parse(junit.write(rep, tmp_path / "junit.xml"))
