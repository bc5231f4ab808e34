"""Rule ids have one home, `gitstate/law/rule_ids.py`: every id the package uses is declared there
with its description, no module spells one as a bare string, and the README's table of rules
lists exactly the declared ones."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from gitstate.law.rule_ids import Rule

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gitstate"
HOME = PACKAGE / "law" / "rule_ids.py"
ID = re.compile(r"[a-z]+(-[a-z]+)*")
HYPHENATED = re.compile(r"[a-z]+(-[a-z]+)+")

# Strings that happen to spell a rule id but are not one.
NOT_RULES = {
    ("git/hub_report.py", "non-fast-forward"): "git's own words for a push that lost a race",
    ("doors/queue.py", "too-many-refs"): "a pusher that only waits imports nothing of the law "
                                         "(test_a_pusher_waiting_for_a_pass_imports_nothing_"
                                         "of_the_law_or_gits_runner holds it equal)",
    ("doors/queue.py", "queue-move"): "the same",
    ("law/freezestate.py", "freeze-state"): "the name a freeze-state file is parsed under",
    ("errors.py", "unreadable"): "errors.py is below law/, where Rule lives: Rule.UNREADABLE "
                                 "(test_an_unreadable_file_is_refused_by_its_rule)",
}


def test_an_unreadable_file_is_refused_by_its_rule():
    from gitstate.errors import InvalidFile
    assert InvalidFile("x").rule == Rule.UNREADABLE


def _trees():
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != HOME:
            yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text("utf-8"))


def _is_rule_attr(node) -> bool:
    """`x.rule` or `x["rule"]`."""
    return (isinstance(node, ast.Attribute) and node.attr == "rule") or \
        (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
         and node.slice.value == "rule")


def _rule_positions(tree) -> list:
    """The expressions that stand for a rule id: a Violation's or a hub refusal's first
    argument, `rule=`, a `"rule":` value, the default of `getattr(x, "rule", ...)`, either
    side of a comparison with `x.rule`, and `rule = ...` (attributes, parameters' defaults)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in ("Violation", "_refusal") and node.args:
                out.append(node.args[0])
            if name == "getattr" and len(node.args) == 3 and \
                    isinstance(node.args[1], ast.Constant) and node.args[1].value == "rule":
                out.append(node.args[2])
            out += [k.value for k in node.keywords if k.arg == "rule"]
        elif isinstance(node, ast.Dict):
            out += [v for k, v in zip(node.keys, node.values)
                    if isinstance(k, ast.Constant) and k.value == "rule"]
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_rule_attr(s) for s in sides):
                out += sides
        elif isinstance(node, ast.Assign):
            if any(getattr(t, "id", getattr(t, "attr", None)) == "rule" for t in node.targets):
                out.append(node.value)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args.posonlyargs + node.args.args
            out += [d for a, d in zip(args[len(args) - len(node.args.defaults):],
                                      node.args.defaults) if a.arg == "rule"]
            out += [d for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults)
                    if a.arg == "rule" and d is not None]
    return out


def _spelled(tree) -> list:
    """The string constants where a rule id stands, shaped as one (the key "rule" itself and
    prose, e.g. a field's description, aside)."""
    return [n for node in _rule_positions(tree) for n in ast.walk(node)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value != "rule"
            and ID.fullmatch(n.value)]


def test_each_member_is_its_id_and_carries_one_line():
    assert Rule.ROLE_MAX == "role-max" and f"[{Rule.ROLE_MAX}]" == "[role-max]"
    assert json.dumps({"rule": Rule.ROLE_MAX}) == '{"rule": "role-max"}'
    assert Rule("role-max") is Rule.ROLE_MAX and {"role-max"} == {Rule.ROLE_MAX}
    assert str(Rule.ROLE_MAX) == "role-max" and len(Rule) == len(list(Rule)) > 50
    with pytest.raises(ValueError, match="'no-such-rule' is not a valid Rule"):
        Rule("no-such-rule")
    assert Rule.ROLE_MAX.description == "more living holders of a role than its max"
    for rule in Rule:
        assert ID.fullmatch(rule), rule
        assert rule.name == rule.upper().replace("-", "_")
        assert rule.description and "\n" not in rule.description, rule


def test_a_member_copies_and_pickles_as_itself():
    """As an enum member does: a refusal carrying its rule may be copied, or pickled to
    another process (a pool's worker), and comes back as the same member."""
    import copy
    import pickle
    for rule in (Rule.ROLE_MAX, Rule(list(Rule)[-1].value)):
        assert copy.copy(rule) is rule and copy.deepcopy({"r": [rule]})["r"][0] is rule
        assert pickle.loads(pickle.dumps(rule)) is rule
        assert rule.description == pickle.loads(pickle.dumps(rule)).description


def test_no_module_spells_a_rule_id():
    declared = {r.value for r in Rule}
    found = [f"{name}:{node.lineno}: {node.value!r}" for name, tree in _trees()
             for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and node.value in declared and HYPHENATED.fullmatch(node.value)
             and (name, node.value) not in NOT_RULES]
    assert found == [], "use the member of gitstate.law.rule_ids.Rule"


def test_where_a_rule_is_named_it_is_a_member():
    found = [f"{name}:{node.lineno}: {node.value!r}" for name, tree in _trees()
             for node in _spelled(tree)]
    assert found == [], "a rule is named by a member of gitstate.law.rule_ids.Rule"


def test_every_member_is_used():
    used = {node.attr for _name, tree in _trees() for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "Rule"}
    assert [r.name for r in Rule if r.name not in used] == []


def test_the_checks_can_fail():
    tree = ast.parse('Violation("role-max", "m")\nv.rule == "log"\np["rule"] in ("q",)\n'
                     'd = {"rule": "x"}\nf(rule="y")\ngetattr(e, "rule", "z")\n'
                     'class E:\n    rule = "w"\ndef g(rule="v"): pass\n')
    assert sorted(n.value for n in _spelled(tree)) == \
        ["log", "q", "role-max", "v", "w", "x", "y", "z"]


def test_the_rules_in_detail_list_every_rule():
    """docs/explanation/rules.md, the hand-written account of each rule, misses none (the
    reference page, docs/reference/rules.md, is made from `Rule` by docs/gen.py)."""
    text = (ROOT / "docs" / "explanation" / "rules.md").read_text(encoding="utf-8")
    table = text.split("\n| rule | refuses |\n", 1)[1].split("\n\n", 1)[0]
    listed = {rule for row in table.splitlines()[1:]
              for rule in re.findall(r"`([^`]+)`", row.split("|")[1])}
    assert listed == {r.value for r in Rule}
