"""Configuration: discovery, validation errors with positions, CLI precedence, init."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import ENV_POD, FIXTURES, ROOT, run_cli, scan_json

from gpulint.scan.runconfig import CliOptions, choose_rules, plan
from gpulint.cli.starter import starter_config
from gpulint.config.settings import (
    ConfigError,
    default_config,
    find_config,
    load_config,
    resolve_settings,
    schema,
)
from gpulint.knowledge.gpu import DEFAULT_SETTINGS
from gpulint.scan.registry import load_rules

INVALID = FIXTURES / "config" / "invalid"



@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository root: discovery stops here, whatever lies above tmp_path."""
    (tmp_path / ".git").mkdir()
    return tmp_path


def _errors(stderr: str) -> list[str]:
    return [line.removeprefix("gpulint: error: ") for line in stderr.splitlines()]


# --- validation errors name the key, the file and the line ---------------------


def test_unknown_key_names_key_file_and_line() -> None:
    path = INVALID / "unknown-key.gpulint.yaml"
    code, out, err = run_cli("scan", "--config", str(path), str(FIXTURES / "core" / "list.yaml"))
    assert code == 2
    assert out == ""
    assert _errors(err) == [
        f"{path}:3:1: unknown key `ignor`; did you mean `ignore`?",
        f"{path}:6:5: unknown key `severty` in `rules.GPU003`; did you mean `severity`?",
    ]


def test_bad_values_are_each_reported_at_their_value() -> None:
    path = INVALID / "bad-values.gpulint.yaml"
    code, _out, err = run_cli("scan", "--config", str(path), str(FIXTURES / "core"))
    assert code == 2
    assert _errors(err) == [
        f'{path}:1:10: `fail-on`: "warn" is not one of error, warning, info, never',
        f'{path}:4:15: `rules.GPU003.severity`: "critical" is not one of error, warning, info',
        f"{path}:5:14: `rules.GPU003.enabled`: expected true or false, got a string",
        f"{path}:6:10: `exclude`: expected a list, got a string",
        f"{path}:8:5: `exemptions[0]`: missing required key `reason`",
        f"{path}:10:5: `exemptions[1]`: an exemption needs at least one of rules, path, namespace, kind, name, "
        "container, image besides its reason (to accept a finding everywhere, ignore its rule)",
    ]


def test_unknown_rule_codes_and_options_are_checked_against_the_registry() -> None:
    path = INVALID / "unknown-rule-and-option.gpulint.yaml"
    code, _out, err = run_cli("scan", "--config", str(path), str(FIXTURES / "core"))
    assert code == 2
    assert _errors(err) == [
        f"{path}:1:17: `extend-select`: unknown rule code `GPU9` (see `gpulint rules`)",
        f"{path}:5:7: `rules.GPU003.options.none-is-hiden`: GPU003 (visible-devices-env) has no option "
        "`none-is-hiden`; its options: `none-is-hidden`",
        f"{path}:6:23: `rules.GPU003.options.none-is-hidden`: expected a boolean (default true), got a string",
        f"{path}:7:3: `rules`: unknown rule `visible-devices-env-typo`; did you mean `visible-devices-env`?",
    ]


@pytest.mark.parametrize("text, expected", [
    ("select: [GPU003\n", ":2:1: invalid YAML: while parsing a flow sequence"),
    ("select: []\nselect: [GPU003]\n", ":2:1: duplicate key 'select' (first defined at line 1)"),
    ("- GPU003\n", ":1:1: the configuration must be a mapping of keys, not a list"),
    ("ignore: []\n---\nselect: []\n", ":3:1: a configuration file holds a single YAML document"),
    ("rules:\n  GPU3!: {}\n", ":2:3: `GPU3!` in `rules` is not a rule id or name"),
    ("select: [GPU003, 'visible devices']\n", ":1:18: `select[1]`: 'visible devices' is not a rule code"),
    ("exemptions:\n- kind: [Job, 3]\n  reason: x\n", ":2:9: `exemptions[0].kind`: expected a glob or a "
                                                    "non-empty list of globs, got a list"),
    ("settings:\n  gpu-resource: []\n", ":2:3: unknown key `gpu-resource` in `settings`; did you mean "
                                        "`gpu-resources`?"),
    ("settings:\n  extend-gpu-images: registry.example.com/*\n",
     ":2:22: `settings.extend-gpu-images`: expected a list, got a string"),
    ("rules:\n  GPU003: {severity: error}\n  visible-devices-env: {enabled: false}\n",
     ":3:3: `rules`: GPU003 (visible-devices-env) is configured twice"),
])
def test_config_error_positions(repo: Path, text: str, expected: str) -> None:
    path = repo / ".gpulint.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path, load_rules())
    assert str(caught.value).startswith(str(path) + expected), str(caught.value)


def test_config_error_from_discovered_file_exits_2(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("fail-on: sometimes\n")
    (repo / "pod.yaml").write_text(ENV_POD.format(name="a", value="all"))
    code, out, err = run_cli("scan", str(repo / "pod.yaml"))
    assert (code, out) == (2, "")
    assert _errors(err) == [f'{repo / ".gpulint.yaml"}:1:10: `fail-on`: "sometimes" is not one of '
                            "error, warning, info, never"]


def test_missing_config_file_is_a_usage_error(tmp_path: Path) -> None:
    code, _out, err = run_cli("scan", "--config", str(tmp_path / "nope.yaml"), str(tmp_path))
    assert code == 2
    assert f"{tmp_path / 'nope.yaml'}: no such configuration file" in err


def test_empty_and_comment_only_config_is_the_default(repo: Path) -> None:
    path = repo / ".gpulint.yaml"
    for text in ("", "# nothing here\n"):
        path.write_text(text)
        config = load_config(path, load_rules())
        assert (config.select, config.ignore, config.exemptions, config.file) == (None, [], [], path)
        assert config.settings == DEFAULT_SETTINGS


# --- pyproject.toml --------------------------------------------------------------


PYPROJECT = """[project]
name = "demo"

[tool.gpulint]
ignore = ["GPU003"]
fail-on = "error"

[tool.gpulint.rules.GPU003]
severity = "warning"
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_pyproject_tool_table_is_found_and_used(repo: Path) -> None:
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "k8s").mkdir()
    (repo / "k8s" / "pod.yaml").write_text(ENV_POD.format(name="a", value="all"))
    assert find_config([str(repo / "k8s")]) == repo / "pyproject.toml"
    code, report = scan_json(str(repo / "k8s"))
    assert (code, report["findings"]) == (0, [])


def test_pyproject_without_tool_table_is_not_a_config(repo: Path) -> None:
    (repo / "pyproject.toml").write_text("[project]\nname = 'demo'\n[tool.ruff]\nline-length = 99\n")
    assert find_config([str(repo)]) is None


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_pyproject_errors_name_the_line(repo: Path) -> None:
    path = repo / "pyproject.toml"
    path.write_text(PYPROJECT.replace('severity = "warning"', 'severity = "loud"')
                    .replace('fail-on = "error"', 'fail-on = "error"\nselct = ["GPU003"]'))
    with pytest.raises(ConfigError) as caught:
        load_config(path, load_rules())
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:7:1: unknown key `selct`; did you mean `select`?",
        f'{path}:10:1: `rules.GPU003.severity`: "loud" is not one of error, warning, info',
    ]
    path.write_text("[tool.gpulint\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, load_rules())
    assert str(caught.value).startswith(f"{path}:1:")
    assert "invalid TOML" in str(caught.value)


def test_pyproject_on_python_without_tomllib_says_so(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tomllib", None)  # `import tomllib` now fails, as on 3.10
    path = repo / "pyproject.toml"
    path.write_text(PYPROJECT)
    with pytest.raises(ConfigError) as caught:
        load_config(path, load_rules())
    assert str(caught.value) == (f"{path}: [tool.gpulint] in pyproject.toml needs Python 3.11 or later "
                                 "(tomllib); on Python 3.10 put the configuration in .gpulint.yaml")


# --- discovery -------------------------------------------------------------------


def test_nearest_config_to_the_first_path_wins(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("ignore: []\n")
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    (repo / "a" / ".gpulint.yml").write_text("ignore: []\n")
    (deep / "pod.yaml").write_text("x: 1\n")
    assert find_config([str(deep / "pod.yaml")]) == repo / "a" / ".gpulint.yml"
    assert find_config([str(deep)]) == repo / "a" / ".gpulint.yml"
    assert find_config([str(repo), str(deep)]) == repo / ".gpulint.yaml"
    # .gpulint.yaml before .gpulint.yml before pyproject.toml in one directory.
    (repo / "a" / ".gpulint.yaml").write_text("ignore: []\n")
    (repo / "a" / "pyproject.toml").write_text(PYPROJECT)
    assert find_config([str(deep)]) == repo / "a" / ".gpulint.yaml"


def test_discovery_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / ".gpulint.yaml").write_text("ignore: [GPU003]\n")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "k8s").mkdir()
    assert find_config([str(project / "k8s")]) is None
    (project / ".git").rmdir()
    (project / ".git").write_text("gitdir: /elsewhere\n")  # a worktree: .git is a file
    assert find_config([str(project / "k8s")]) is None


def test_stdin_and_no_paths_use_the_current_directory(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / ".gpulint.yaml").write_text("ignore: [GPU003]\n")
    sub = repo / "sub"
    sub.mkdir()
    monkeypatch.chdir(sub)
    assert find_config(["-"]) == repo / ".gpulint.yaml"
    assert find_config([]) == repo / ".gpulint.yaml"
    code, report = scan_json("-", input=ENV_POD.format(name="a", value="all"))
    assert (code, report["findings"]) == (0, [])


def test_missing_first_path_still_finds_the_config_of_its_directory(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("ignore: []\n")
    assert find_config([str(repo / "gone.yaml")]) == repo / ".gpulint.yaml"


# --- what the configuration does -----------------------------------------------


def _pod_dir(repo: Path, config: str, **pods: str) -> Path:
    (repo / ".gpulint.yaml").write_text(config)
    for name, value in pods.items():
        (repo / f"{name}.yaml").write_text(ENV_POD.format(name=name, value=value))
    return repo


def test_severity_override_and_option(repo: Path) -> None:
    _pod_dir(repo, "rules:\n  GPU003:\n    severity: info\n    options: {none-is-hidden: false}\n",
             a="none")
    code, report = scan_json(str(repo))
    assert code == 0  # info is below the default fail-on (warning)
    (finding,) = report["findings"]
    assert (finding["rule"], finding["severity"], finding["line"]) == ("GPU003", "info", 10)
    assert finding["message"].startswith("NVIDIA_VISIBLE_DEVICES=none still injects")


def test_fail_on_from_config_and_cli_overrides_it(repo: Path) -> None:
    _pod_dir(repo, "fail-on: never\n", a="all")
    assert run_cli("scan", str(repo))[0] == 0
    assert run_cli("scan", "--fail-on", "error", str(repo))[0] == 1


def test_rule_enabled_false_and_cli_extend_select_reenables(repo: Path) -> None:
    _pod_dir(repo, "rules:\n  visible-devices-env: {enabled: false}\n", a="all")
    code, report = scan_json(str(repo))
    assert (code, report["findings"]) == (0, [])
    code, report = scan_json("--extend-select", "GPU003", str(repo))
    assert code == 1
    assert [f["rule"] for f in report["findings"]] == ["GPU003"]


def test_cli_select_replaces_config_select_and_cli_ignore_removes() -> None:
    rules = load_rules()
    project = default_config()
    project.select = ["GPU09"]
    project.ignore = ["GPU091"]
    ids = [r.id for r in choose_rules(rules, project, CliOptions())]
    # GPU000 and GPU010 are kept when other rules are selected: nothing unread goes unsaid.
    assert ids == ["GPU000", "GPU010", "GPU090", "GPU092", "GPU099"]
    assert [r.id for r in choose_rules(rules, project, CliOptions(select=["GPU003"]))] == ["GPU000", "GPU003", "GPU010"]
    ids = [r.id for r in choose_rules(rules, project, CliOptions(ignore=["GPU090"], extend_select=["GPU091"]))]
    assert ids == ["GPU000", "GPU010", "GPU091", "GPU092", "GPU099"]
    project.ignore = ["GPU000"]
    assert "GPU000" not in [r.id for r in choose_rules(rules, project, CliOptions())]
    assert "GPU000" in [r.id for r in choose_rules(rules, project, CliOptions(extend_select=["GPU000"]))]


def test_unknown_cli_code_is_still_a_usage_error(repo: Path) -> None:
    _pod_dir(repo, "ignore: []\n", a="all")
    code, _out, err = run_cli("scan", "--ignore", "GPU9", str(repo))
    assert code == 2
    assert "--ignore: unknown rule code 'GPU9'" in err


def test_settings_replace_or_extend() -> None:
    settings = resolve_settings({
        "gpu-resources": ["example.com/gpu"],
        "extend-gpu-resources": ["example.com/vgpu", "example.com/gpu"],
        "extend-runtime-classes": ["kata-nvidia"],
        "gpu-images": ["registry.example.com/ml/*"],
    })
    assert settings["gpu-resources"] == ["example.com/gpu", "example.com/vgpu"]
    assert settings["runtime-classes"] == [*DEFAULT_SETTINGS["runtime-classes"], "kata-nvidia"]
    assert settings["gpu-images"] == ["registry.example.com/ml/*"]
    assert settings["gpu-node-labels"] == DEFAULT_SETTINGS["gpu-node-labels"]
    assert set(settings) == set(DEFAULT_SETTINGS)


def test_settings_and_options_reach_the_scan_config(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "settings:\n  extend-gpu-images: [registry.example.com/ml/*]\n"
        "rules:\n  GPU003: {options: {none-is-hidden: false}}\n")
    rules = load_rules()
    run = plan(rules, load_config(repo / ".gpulint.yaml", rules), CliOptions())
    assert run.scan.settings["gpu-images"] == ["registry.example.com/ml/*"]
    assert run.scan.options == {"GPU003": {"none-is-hidden": False}}
    assert run.fail_on == "warning"


def test_schema_lists_every_shared_setting_in_both_forms() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    keys = set(schema()["$defs"]["settings"]["properties"])
    assert keys == set(DEFAULT_SETTINGS) | {f"extend-{k}" for k in DEFAULT_SETTINGS}


# --- exclude ---------------------------------------------------------------------


def test_exclude_is_relative_to_the_config_and_prunes_named_files(repo: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / ".gpulint.yaml").write_text("exclude: [./k8s/generated/, '*.tmpl.yaml']\n")
    for rel in ("k8s/generated/a.yaml", "k8s/app/b.yaml", "k8s/app/c.tmpl.yaml", "generated/d.yaml"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(ENV_POD.format(name=Path(rel).stem.replace(".", "-"), value="all"))
    _code, report = scan_json(str(repo))
    assert sorted(Path(f["path"]).relative_to(repo).as_posix() for f in report["findings"]) == [
        "generated/d.yaml", "k8s/app/b.yaml"]
    # From a subdirectory, with relative paths: still relative to the config file.
    monkeypatch.chdir(repo / "k8s")
    _code, report = scan_json(".")
    assert [f["path"] for f in report["findings"]] == ["app/b.yaml"]
    # A file named on the command line (pre-commit does this) is excluded too.
    code, report = scan_json("generated/a.yaml")
    assert (code, report["summary"]["files"]) == (0, 0)


def test_cli_exclude_adds_to_the_config_exclude(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("exclude: [a.yaml]\n")
    _pod_dir(repo, "exclude: [a.yaml]\n", a="all", b="all", c="all")
    _code, report = scan_json("--exclude", "b.yaml", str(repo))
    assert [Path(f["path"]).name for f in report["findings"]] == ["c.yaml"]


# --- gpulint init ----------------------------------------------------------------


def test_init_writes_a_starter_config_that_validates(repo: Path) -> None:
    code, out, _err = run_cli("init", str(repo))
    path = repo / ".gpulint.yaml"
    assert (code, out) == (0, f"Wrote {path}\n")
    text = path.read_text()
    assert text == starter_config(load_rules())
    rules = load_rules()
    config = load_config(path, rules)
    # As written it changes nothing: the default rules, fail-on warning.
    assert choose_rules(rules, config, CliOptions()) == choose_rules(rules, default_config(), CliOptions())
    assert config.fail_on == "warning"
    # Every rule and every setting is documented in it.
    for rule in rules.values():
        assert f"#   {rule.id}:  # {rule.name}" in text
    for key in DEFAULT_SETTINGS:
        assert f"#   {key}: [" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_init_commented_examples_validate_when_uncommented(repo: Path) -> None:
    lines = starter_config(load_rules()).splitlines()
    # Uncomment the rules, settings and exemptions sections and the lines under them.
    out = [line[2:] if line.startswith(("# rules:", "# settings:", "# exemptions:", "#   ")) else line
           for line in lines]
    text = "\n".join(out)
    (repo / ".gpulint.yaml").write_text(text)
    rules = load_rules()
    config = load_config(repo / ".gpulint.yaml", rules)
    assert config.exemptions[0].kind == ("Job",)
    # The commented lists are the defaults (plus the one example addition).
    assert config.settings == {**DEFAULT_SETTINGS, "gpu-images": ["registry.example.com/ml/*"]}
    # The commented rule entries are the rules' defaults.
    assert {rid: rc.severity for rid, rc in config.rules.items()} == {r.id: r.severity for r in rules.values()}
    assert config.rules["GPU003"].options == rules["GPU003"].options


def test_init_refuses_to_overwrite_unless_forced(repo: Path) -> None:
    path = repo / ".gpulint.yaml"
    path.write_text("ignore: [GPU003]\n")
    code, _out, err = run_cli("init", str(repo))
    assert code == 2
    assert f"{path} already exists; use --force to overwrite it" in err
    assert path.read_text() == "ignore: [GPU003]\n"
    assert run_cli("init", "--force", str(repo))[0] == 0
    assert path.read_text() == starter_config(load_rules())


def test_init_refuses_when_a_yml_config_exists(repo: Path) -> None:
    (repo / ".gpulint.yml").write_text("ignore: []\n")
    code, _out, err = run_cli("init", str(repo))
    assert code == 2 and ".gpulint.yml already exists" in err
    assert not (repo / ".gpulint.yaml").exists()


# --- the documentation stays true -----------------------------------------------------


def _docs_block(page: str, heading: str, language: str) -> str:
    text = (ROOT / "docs" / page).read_text()
    section = text[text.index(heading):]
    start = section.index(f"```{language}\n") + len(language) + 4
    return section[start: section.index("```", start)]


def test_documented_sample_configuration_validates(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(_docs_block("configuration.md", "## Sample configuration", "yaml"))
    # The chart and values file its `charts:` entry names.
    (repo / "charts" / "inference").mkdir(parents=True)
    (repo / "charts" / "inference" / "Chart.yaml").write_text("apiVersion: v2\nname: inference\nversion: 0.1.0\n")
    (repo / "deploy").mkdir()
    (repo / "deploy" / "prod-values.yaml").write_text("gpu: {count: 0}\n")
    config = load_config(repo / ".gpulint.yaml", load_rules())
    assert [(c.chart, c.values.files, c.values.sets) for c in config.charts] == [
        (str(repo / "charts" / "inference"), (str(repo / "deploy" / "prod-values.yaml"),), ("gpu.count=0",))]
    assert config.extend_select == ["unused-suppression"]
    assert config.baseline == repo / ".gpulint-baseline.json"
    assert [e.reason for e in config.exemptions] == [
        "acceptance test run on cordoned nodes before they join the pool",
        "monitoring reads every GPU and allocates none"]


def test_documented_baseline_example_is_the_real_format() -> None:
    from gpulint.suppress.baseline import VERSION, Key

    example = json.loads(_docs_block("suppressions.md", "## Baseline", "json"))
    assert example["version"] == VERSION
    key = Key.from_entry(example["entries"][0])
    assert key.as_entry(1) == {**example["entries"][0]}
