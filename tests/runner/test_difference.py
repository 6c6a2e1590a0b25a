"""`conformance/difference.py`: a failure that compares a value sent with the value that came back names the smallest
difference (the code point, the characters named, a window of context; the path of a JSON member) and, when one of
the transformations a server may apply explains it exactly, what the service did; never a guess."""
from __future__ import annotations

import json
import unicodedata
import urllib.parse

import pytest

from conformance import canned
from conformance.difference import (DIAGNOSES, MISSING, describe, diagnose, diagnose_length, explain, lengths,
                                    utf8_bytes)
from conformance.model.values import (ASTRAL, COMPATIBILITY, COMPOSITION, EDGE_WHITESPACE, FOLDING, JSON_ESCAPES,
                                      NON_ASCII, PARAM_TWINS, PUNCTUATION, STRING_KINDS, TRANSFORMABLE, TRANSFORMS)
from conformance.outcomes import Deviation

# a session key as the suite sends it: every string kind of the model at once, whitespace at both ends
KEY = (" \tconf-8e506b6-" + "".join(NON_ASCII + ASTRAL + JSON_ESCAPES + PUNCTUATION)
       + "".join(FOLDING + COMPOSITION + COMPATIBILITY) + "-k\t ")


# -- what differs --------------------------------------------------------------------------------------------------
def test_a_trimmed_key_names_what_was_removed_at_each_end():
    said = describe(KEY, KEY.strip())
    assert said.startswith("removed ' \\t' (U+0020 U+0009) at the start and '\\t ' (U+0009 U+0020) at the end")
    assert f"{len(KEY)} → {len(KEY) - 4} code points" in said
    assert "« \\t»" in said and "«\\t »" in said                 # both ends of the window, marked


def test_one_character_changed_is_named_by_code_point_with_context():
    got = KEY.replace("-k\t", "-k ")
    said = describe(KEY, got)
    at = KEY.index("-k\t") + 2
    assert said.startswith(f"at code point {at}, {len(KEY)} code points: '\\t' (U+0009) → ' ' (U+0020), in '…")
    assert said.endswith("-k«\\t» '")


def test_a_prefix_and_added_characters_are_said_so():
    assert describe("abcdef", "abc").startswith("removed 'def' (U+0064 U+0065 U+0066) at the end (what came back is "
                                                "a prefix of what was sent)")
    assert describe("abc", "abcX").startswith("added 'X' (U+0058) at the end (sent is a prefix of what came back)")
    assert describe("abc", "Xabc").startswith("added 'X' (U+0058) at the start")
    assert describe("abc", "bc").startswith("removed 'a' (U+0061) at the start")
    assert describe("abc", "abc") == "none"


def test_characters_that_do_not_show_themselves_are_escaped():
    said = describe("caf\u00e9 \u2028", "cafe\u0301 \u2028")
    assert "U+00E9" in said and "U+0065 U+0301" in said
    assert "e\\u0301" in said and "\\u2028" in said             # a combining mark and a separator, escaped
    assert "\u2028" not in said and "\u0301" not in said


@pytest.mark.parametrize("at", [0, 5000, 9999])
def test_a_long_value_is_shortened_around_the_difference_never_at_its_end(at):
    long = "".join("abcdefghij"[i % 10] for i in range(10000))
    got = long[:at] + "\u00e9" + long[at + 1:]
    said = explain(long, got)
    assert len(said) < 400, said
    assert f"at code point {at}" in said and f"'{long[at]}' (U+{ord(long[at]):04X}) → 'é' (U+00E9)" in said
    window = said[said.index(", in '") + 6:]
    assert "«" + long[at] + "»" in window
    assert window.startswith("…" if at > 12 else long[:at])
    assert ("…'" in window) == (at < 9999 - 12)                  # elided after the difference only when more follows


def test_several_changes_name_the_first_and_count_the_others():
    said = describe("a-b-c-d-e-f-g-h-i-j-k-l", "a-B-c-d-e-f-g-H-i-j-k-L")
    assert said.startswith("at code point 2,") and "'b' (U+0062) → 'B' (U+0042)" in said
    assert "2 more changes (at code points 14, 22)" in said


# -- JSON values ---------------------------------------------------------------------------------------------------
def test_the_path_of_the_first_differing_member():
    sent = {"confKey": 1, "confText": "x", "nested": {"list": [1, 2, {"deep": "v"}]}}
    assert describe(sent, {"confText": "x", "nested": sent["nested"]}, "params") == "params.confKey: 1 → missing"
    got = json.loads(json.dumps(sent))
    got["nested"]["list"][2]["deep"] = "w"
    assert describe(sent, got, "params").startswith("params.nested.list[2].deep: at code point 0")
    assert describe({" confPad\t": 8}, {}, "params") == 'params[" confPad\\t"]: 8 → missing'
    assert describe({"a": 1}, {"a": 1, "extra": 2}, "params") == "params.extra: missing → 2"
    assert describe({"a": 1}, {"a": 1, "extra": 2}, "params", only_sent=True) == "none"


def test_a_message_content_is_compared_as_a_string():
    messages = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"},
                {"role": "user", "content": "  three \u00e9\t"}]
    got = json.loads(json.dumps(messages))
    got[2]["content"] = "three \u00e9"
    said = explain(messages, got, "messages")
    assert said.startswith("difference: messages[2].content: removed '  ' (U+0020 U+0020) at the start and '\\t' "
                           "(U+0009) at the end")
    assert said.endswith("; cause: the service trimmed the value (every string of the value, member names included)")
    assert describe(messages, messages[:2], "messages").startswith("messages[2]: {")


@pytest.mark.parametrize("sent, got, difference, cause", [
    (7, "7", '7 (integer) → "7" (string)', "the service wrote the integer as a string"),
    ("7", 7, '"7" (string) → 7 (integer)', "the service read the string of digits as a number"),
    (2 ** 53 + 1, float(2 ** 53 + 1), "9007199254740993 → 9007199254740992.0",
     "the service lost precision beyond 2^53: it read the number as a double"),
    (7, 7.0, "7 → 7.0 (the same integer, written otherwise)",
     "the service wrote the integer as a double (7 → 7.0)"),
    (True, 1, "true (boolean) → 1 (integer)", "the service wrote the boolean true as 1"),
    (7, None, "7 (integer) → null", None),
    (7, MISSING, "7 → missing", None),
])
def test_numbers_and_types(sent, got, difference, cause):
    assert describe(sent, got) == difference
    assert (diagnose(sent, got) or "").startswith(cause or "") and (diagnose(sent, got) is None) == (cause is None)


def test_members_dropped_for_their_empty_value():
    sent = {"confZero": 0, "confEmptyArray": [], "confEmptyObject": {}, "": "empty name", "confOne": 1}
    got = {"": "empty name", "confOne": 1}
    assert diagnose(sent, got) == ("the service dropped the members whose value is empty (0, [], {}), as Go's "
                                   "`omitempty` does")


def test_member_names_transformed_or_merged():
    twins = {**PARAM_TWINS, "confText": "Mixed Case"}
    lowered = {}
    for name, value in twins.items():
        lowered[name.lower()] = value               # the last of two names made equal keeps its value
    assert diagnose(twins, lowered) == ("the service changed every member name (lower-cased it: 'confKey' came back "
                                        "as 'confkey', merging the names it makes equal)")
    first_kept = {}
    for name, value in twins.items():
        first_kept.setdefault(name.strip(), value)  # the first keeps its value
    assert diagnose(twins, first_kept).startswith("the service changed every member name (trimmed it: ' confPad\\t' "
                                                  "came back as 'confPad'")
    names_only = {name.lower(): value for name, value in PARAM_TWINS.items()}     # the values are no strings
    assert diagnose(dict(PARAM_TWINS), names_only) == ("the service lower-cased it (every string of the value, "
                                                       "member names included)")
    assert diagnose({"confPad": 7, "Other": 1}, {"confpad": 7, "Other": 1}).startswith(
        "the service changed a member name: 'confPad' came back as 'confpad' (lower-cased it")


# -- what the service did: every transformation, and two together -----------------------------------------------
def _kinds(*kinds: str) -> str:
    return "conf-" + "".join("".join(STRING_KINDS[kind]) for kind in kinds) + "-x"


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_every_transformation_of_the_model_is_diagnosed(name):
    t = TRANSFORMS[name]
    sent = _kinds(*t.kinds) if "edge-whitespace" not in t.kinds else " \t" + _kinds("non-ascii") + "\t "
    got = t.twin(sent)
    assert got != sent
    cause = diagnose(sent, got)
    assert cause is not None and cause.startswith("the service "), (name, cause)
    assert DIAGNOSES[name].maps(sent, got)


WORDS = {   # diagnosis: (sent, what the service made of it, what the cause says)
    "trim": (" \tkey-ab\t ", "key-ab", "the service trimmed the value"),
    "trim-start": (" \tkey-ab\t ", "key-ab\t ", "the service trimmed the value at its start"),
    "trim-end": (" \tkey-ab\t ", " \tkey-ab", "the service trimmed the value at its end"),
    "lower": ("Key-AB", "key-ab", "the service lower-cased it (or case-folded it: the same here)"),
    "upper": ("Key-ab", "KEY-AB", "the service upper-cased it"),
    "case-fold": ("Key-ßΣ", "key-ssσ", "the service case-folded it"),
    "nfc": ("conf-e\u0301", "conf-\u00e9", "the service normalised it to NFC"),
    "nfd": ("conf-\u00e9", "conf-e\u0301", "the service normalised it to NFD"),
    "nfkc": ("conf-\u00b2\uff76", "conf-2\u30ab", "the service normalised it to NFKC"),
    "nfkd": ("conf-\u00b2\u00e9", "conf-2e\u0301", "the service normalised it to NFKD"),
    "accents": ("conf-\u00e9\u00f1", "conf-en", "the service dropped its accents"),
    "collapse-whitespace": ("a \t b  c", "a b c", "the service collapsed a run of whitespace (' \\t ' into one space)"),
    "collapse-unicode-whitespace": ("a\u2028\u2029b", "a b", "the service collapsed a run of whitespace"),
    "whitespace-to-space": ("a\t\tb", "a  b", "the service turned each whitespace character into a space"),
    "drop-control": ("a\u0000b\u200bc", "abc", "the service dropped control and format characters (Cc, Cf) "
                                               "(U+0000 U+200B)"),
    "drop-non-ascii": ("conf-東あ€-x", "conf--x",
                       "the service dropped the non-ASCII characters (U+6771 U+3042 U+20AC)"),
    "ascii-replace": ("conf-東-x", "conf-?-x", "the service wrote it in ASCII, every other character as '?'"),
    "astral-replaced": ("conf-😀-x", "conf-\ufffd-x", "the service replaced every character outside the BMP with "
                                                     "U+FFFD"),
    "mojibake": ("conf-é-x", "conf-Ã©-x", "the service read its UTF-8 bytes as Latin-1"),
    "json-quoted": ('conf-"x"', '"conf-\\"x\\""', "the service wrote it as a JSON string literal"),
    "json-escaped-separator": ("a\u2028b\u2029c", "a\\u2028b\u2029c", "the service left JSON escapes in it as text "
                                                                      "(\\u2028): escaped twice, or never decoded"),
    "json-escaped-solidus": ("a/b/c", "a\\/b\\/c", "the service left JSON escapes in it as text (\\/)"),
    "json-escaped-astral": ("a😀b", "a\\ud83d\\ude00b",
                            "the service left JSON escapes in it as text (\\ud83d\\ude00)"),
    "json-unescaped": ("a\\u00e9b", "aéb", "the service decoded JSON escapes written as text in the value"),
    "percent-encoded": ("a/b c", "a%2Fb%20c", "the service percent-encoded it and left it encoded (%2F, %20)"),
    "percent-decoded": ("a%2fb", "a/b", "the service percent-decoded it (%2f → '/')"),
    "form-decoded": ("a+b%2f", "a b/", "the service decoded it as a form value"),
}


@pytest.mark.parametrize("name", list(WORDS))
def test_each_transformation_is_said_in_words(name):
    sent, got, words = WORDS[name]
    assert (diagnose(sent, got) or "").startswith(words), diagnose(sent, got)


def test_every_diagnosis_has_a_case():
    assert {"json-escaped" if name.startswith("json-escaped") else name for name in WORDS} \
        >= set(DIAGNOSES) - {"astral-pairs-replaced", "unicode-whitespace-to-space"}


@pytest.mark.parametrize("sent, got, words", [
    (" \tKey-AB\t ", "key-ab", "the service trimmed the value, then lower-cased it"),
    ("conf-e\u0301-" + "x" * 30, "conf-\u00e9-" + "x" * 10, "the service normalised it to NFC"),
    ("a  b", "A B", "the service upper-cased it, then collapsed a run of whitespace ('  ' into one space)"),
])
def test_a_composition_of_two(sent, got, words):
    cause = diagnose(sent, got)
    assert cause is not None and cause.startswith(words) and ", then " in cause, cause


def test_the_key_of_a_real_run_trimmed_case_folded_or_normalised():
    assert diagnose(KEY, KEY.strip()) == "the service trimmed the value"
    assert diagnose(KEY, KEY.casefold()) == "the service case-folded it"
    assert diagnose(KEY, unicodedata.normalize("NFC", KEY)).startswith("the service normalised it to NFC")
    assert diagnose(KEY, KEY.replace("/", "\\/")).startswith("the service left JSON escapes in it as text (\\/)")
    assert diagnose(KEY, urllib.parse.quote(KEY, safe="")).startswith("the service percent-encoded it")


# -- cut short, and lengths at a boundary ------------------------------------------------------------------------
def test_a_cut_in_code_points():
    assert diagnose("x" * 100, "x" * 16) == "the service cut it to 16 code points"
    assert diagnose("conf-" + "\u00e9" * 100, "conf-" + "\u00e9" * 59) == \
        "the service cut it to 64 code points (123 UTF-8 bytes)"
    assert diagnose("abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopq…") == \
        "the service cut it to 17 code points and added '…'"


def test_a_cut_in_utf8_bytes():
    sent = "conf-" + "東" * 100
    assert diagnose(sent, sent.encode()[:256].decode("utf-8", "ignore")) == (
        "the service cut it to at most 256 UTF-8 bytes (254 kept: the next character, '東', is 3 UTF-8 bytes and "
        "did not fit)")
    assert diagnose(sent, sent.encode()[:256].decode("utf-8", "replace")).startswith(
        "the service cut it inside a character after 254 UTF-8 bytes")


def test_a_cut_in_utf16_units():
    sent = "conf-" + "😀" * 100
    kept = sent.encode("utf-16-le")[:256].decode("utf-16-le", "ignore")
    assert diagnose(sent, kept) == ("the service cut it to at most 128 UTF-16 units (127 kept: the next character, "
                                    "'😀', is 2 UTF-16 units and did not fit)")


def test_lengths_in_every_unit():
    assert lengths("a\u00e9\u6771😀e\u0301") == {"code points": 6, "UTF-16 units": 7, "UTF-8 bytes": 13,
                                                 "graphemes": 5}


@pytest.mark.parametrize("value, accepted, words", [
    ("conf-" + "\u6771" * 251, False, "refused a key of 256 code points that is 758 UTF-8 bytes: the service counts "
                                      "bytes"),
    ("conf-" + "😀" * 251, False, "refused a key of 256 code points that is 1009 UTF-8 bytes and 507 UTF-16 units: "
                                 "the service counts bytes or UTF-16 units"),
    ("conf-" + "e\u0301" * 126, True, "accepted a key of 257 code points that is 131 graphemes: the service counts "
                                      "graphemes"),
    ("conf-" + "\u6771" * 252, True, "accepted a key of 257 code points, over 256 in every unit (761 UTF-8 bytes): "
                                     "the service's limit is higher, as 1024 bytes (4 bytes a character) would be"),
])
def test_a_length_boundary_probe_names_the_unit_on_the_other_side(value, accepted, words):
    assert (diagnose_length(value, 256, accepted=accepted) or "").startswith(words)


@pytest.mark.parametrize("value, accepted", [("k" * 256, False), ("k" * 257, True), ("k", True), ("", False),
                                             ("conf-" + "\u00e9" * 251, True)])
def test_a_length_the_code_points_explain_or_nothing_does_has_no_cause(value, accepted):
    assert diagnose_length(value, 256, accepted=accepted) is None


# -- never a guess -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sent, got", [
    ("abc", "xyz"), (KEY, "conf-other-key"), (KEY, KEY[::-1]), ("Key", "kex"), ("abc", ""), ("", "abc"),
    ("abcdef", "abdef"), ("hello", "help"), (KEY, KEY.replace("東", "x")), ("a b", "a\u00a0b"),
    ({"confKey": 1, "confkey": 2, "Other": 3}, {"confkey": 2, "Other": 3}),   # one member lost, its twin kept
    ({"a": "x"}, {"a": "y"}), ([1, 2], [2, 1]), (7, 8), ("7", "8"),
])
def test_no_cause_for_unrelated_values(sent, got):
    assert diagnose(sent, got) is None


def test_explain_gives_the_difference_and_the_cause_when_there_is_one():
    assert explain("abc", "xyz") == "difference: at code point 0, 3 code points: 'abc' (U+0061 U+0062 U+0063) → " \
                                    "'xyz' (U+0078 U+0079 U+007A), in '«abc»'"
    assert explain(" k", "k") == ("difference: removed ' ' (U+0020) at the start, 2 → 1 code point: '« »k'; "
                                  "cause: the service trimmed the value")


# -- in the checks' messages ---------------------------------------------------------------------------------------
def _invoke(label: str, sent_key: str, got_key: str):
    body = {"status": "completed", "result": "ok", "events": [], "sessionId": got_key, "agentId": "agt_canned",
            "versionNumber": 1, "requestId": "req_1", "durationMs": 3}
    return canned.exchange(200, {"content-type": "application/json"}, body=body, label=label,
                           request_body={"prompt": "x", "sessionId": sent_key})


@pytest.mark.parametrize("got, cause", [(KEY.strip(), "the service trimmed the value"),
                                        (KEY.casefold(), "the service case-folded it")])
def test_a_session_key_echoed_changed_says_the_difference_and_its_cause(got, cause):
    from conformance.checks.invoke.sessions import session_echoed
    with pytest.raises(AssertionError) as failed:
        session_echoed(_invoke("count-1", KEY, got))
    message = str(failed.value)
    assert message.startswith("sent sessionId, the result carries another: difference: ")
    assert message.endswith(f"; cause: {cause}") and len(message) < 400, message


def test_params_with_a_member_missing_name_its_path():
    from conformance.checks.invoke.passthrough import params_hold
    sent = {"confKey": 1, "confkey": 2, "confText": "x"}
    echo = {"confkey": 2, "confText": "x", "prompt": "not sent here"}
    body = {"status": "completed", "result": json.dumps(echo, sort_keys=True, separators=(",", ":")), "events": [],
            "sessionId": "s", "agentId": "agt_canned", "versionNumber": 1, "requestId": "req_1", "durationMs": 3}
    ex = canned.exchange(200, {"content-type": "application/json"}, body=body, label="params", request_body=sent)
    with pytest.raises(Deviation) as failed:
        params_hold(ex, sent)
    assert failed.value.message == ("params: fields did not reach `params` unchanged: difference: params.confKey: "
                                    "1 → missing")


def test_the_utf8_byte_count_of_a_refused_key_is_the_cause():
    from conformance.checks.invoke.sessions import key_lengths_accepted
    from conformance.vocab.steps import invoke as steps
    key = "conf-" + "\u00e9" * 251
    refusal = canned.exchange(400, {"content-type": "application/json"}, label=steps.KEY_256,
                              body={"error": {"code": "validation_failed", "message": "too long"}},
                              request_body={"prompt": "x", "sessionId": key})
    rec = canned.recording("invoke.key_lengths", [_invoke(steps.KEY_1, "k", "k"), refusal])
    with pytest.raises(Deviation) as failed:
        key_lengths_accepted(rec)
    assert failed.value.message.startswith("key-256: a 256-character sessionId must be accepted")
    assert failed.value.message.endswith("; cause: refused a key of 256 code points that is 507 UTF-8 bytes: the "
                                         "service counts bytes")
    assert utf8_bytes(key) == 507


# -- the deployed agent, in one line -----------------------------------------------------------------------------
def test_the_agent_line_says_how_the_agent_is_off_its_contract():
    from conformance.reporting import markdown
    from conformance.reporting.terminal import Style, render
    from tests.reports.test_terminal import AGENT_OFF, make_report
    report = {**make_report(skip=("AGUI-SESS-002",)), "agent": AGENT_OFF}
    lines = [ln for ln in render(report, Style(colour=False, width=200)) if ln.startswith("agent: ")]
    assert lines == ["agent: the deployed agent is off its contract, not the service: it counts a resumed run again "
                     "(`count`, 5 readings)"]
    assert "**The deployed agent is off its contract (docs/agent.md), not the service: it counts a resumed run " \
           "again (\\`count\\`, 5 readings)**" in markdown.render(report)


def test_a_value_of_every_kind_changed_in_one_names_that_kind():
    from conformance.model.values import STRING_KINDS
    from conformance.difference import explain
    sent = "conf-x-" + "".join("".join(v) for v in STRING_KINDS.values())
    got = "".join(c for c in sent if c not in "".join(STRING_KINDS["private-use"]))
    assert explain(sent, got).endswith("the characters it changed are of the kind private-use (model.values)")
