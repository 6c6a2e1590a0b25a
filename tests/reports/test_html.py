"""The HTML page on its own (escaping, grouping); test_reports_e2e.py renders real reports in a browser."""
from conformance.reporting import html
from tests.reports.support import FAILING_MUST, make_report


def test_banner_names_verdict_target_seed_and_cost():
    page = html.page(make_report(fail=(FAILING_MUST,)))
    banner = page[page.index("class='banner'"):page.index("</div></div>")]
    assert "NON-CONFORMANT" in banner and "https://127.0.0.1:8443 · agent agt_1 · embedded reference server" in banner
    assert "seed 7" in banner and "240 requests" in banner


def test_requirements_are_grouped_in_details_and_failures_open():
    page = html.page(make_report(fail=(FAILING_MUST,)))
    assert page.count("<details class='protocol'") >= 6
    assert f"<details class='req status-failed' open>" in page
    assert "Reproduce" in page and "$CONFORMANCE_API_KEY" in page


def test_server_text_is_escaped():
    rep = make_report(fail=(FAILING_MUST,))
    for row in rep["requirements"]:
        if row["id"] == FAILING_MUST:
            row["message"] = "<script>alert(1)</script>"
    page = html.page(rep)
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
