"""gpulint.model.shell: commands found, words split, offsets exact."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpulint.model.shell import command_index, parse, script_arguments


def commands(text: str) -> list[tuple[str, int, int, str]]:
    """(program name, start, end, source text of the effective command) of each command."""
    out = []
    for command in parse(text):
        argv = command.argv()
        if argv:
            out.append((command.name, argv[0].start, argv[-1].end, text[argv[0].start:argv[-1].end]))
    return out


def names(text: str) -> list[str]:
    return [c.name for c in parse(text) if c.argv()]


def test_separators_split_commands_with_exact_offsets() -> None:
    text = "a 1; b 2 && c 3 || d 4 | e 5 & f 6\ng 7"
    assert commands(text) == [
        ("a", 0, 3, "a 1"), ("b", 5, 8, "b 2"), ("c", 12, 15, "c 3"), ("d", 19, 22, "d 4"),
        ("e", 25, 28, "e 5"), ("f", 31, 34, "f 6"), ("g", 35, 38, "g 7"),
    ]


def test_words_remove_quotes_and_keep_raw_offsets() -> None:
    text = """docker run -e "A=b c" 'x y' z\\ w"""
    [command] = parse(text)
    assert [w.text for w in command.words] == ["docker", "run", "-e", "A=b c", "x y", "z w"]
    assert [(w.start, w.end) for w in command.words] == [(0, 6), (7, 10), (11, 13), (14, 21), (22, 27), (28, 32)]
    quoted = command.words[3]
    assert [text[p] for p in quoted.positions] == list("A=b c")


def test_echo_and_quoted_arguments_are_data() -> None:
    assert names('echo "docker run --gpus all"; printf \'%s\' "podman run"') == ["echo", "printf"]
    assert names("echo docker run --gpus all") == ["echo"]


def test_comments_only_at_word_start() -> None:
    text = "docker ps # docker run x\nexit a#b"
    assert commands(text) == [("docker", 0, 9, "docker ps"), ("exit", 25, 33, "exit a#b")]
    assert [w.text for w in parse(text)[1].words] == ["exit", "a#b"]


def test_line_continuation_joins_a_command() -> None:
    text = "docker run \\\n  --gpus all \\\n  img\nnext"
    assert commands(text) == [("docker", 0, 33, "docker run \\\n  --gpus all \\\n  img"), ("next", 34, 38, "next")]
    assert [w.text for w in parse(text)[0].words] == ["docker", "run", "--gpus", "all", "img"]


def test_control_keywords_then_do_else() -> None:
    text = "if test -S /s; then\n  podman run a\nelif x; then y\nelse nerdctl run b; fi\nwhile true; do ctr run c d; done"
    assert names(text) == ["test", "podman", "x", "y", "nerdctl", "true", "ctr"]
    assert ("podman", 22, 34, "podman run a") in commands(text)


def test_for_and_case_heads_are_not_commands() -> None:
    text = 'for img in a b; do docker run $img; done\ncase "$m" in\n  gpu|all) docker create x;;\n  (*) echo no ;;\nesac\nafter'
    assert names(text) == ["docker", "docker", "echo", "after"]
    start = text.index("docker create")
    assert ("docker", start, start + len("docker create x"), "docker create x") in commands(text)


def test_subshells_brace_groups_and_functions() -> None:
    assert names("(cd /x && docker run a) ; { podman run b; }") == ["cd", "docker", "podman"]
    assert names("launch() { docker run a; }\nlaunch") == ["docker", "launch"]
    assert names("function launch { docker run a; }") == ["docker"]


def test_assignments_and_wrappers_are_skipped() -> None:
    text = "FOO=bar X=\"1 2\" sudo -u root -E env A=1 nohup timeout -s KILL 10 docker run x"
    [(name, start, _end, source)] = commands(text)
    assert (name, source) == ("docker", "docker run x")
    assert start == text.index("docker")
    assert names("exec docker run x") == ["docker"]
    assert names("xargs -n1 -I{} podman run {}") == ["podman"]
    assert names("x=1") == []
    assert names("exec 3>&1") == []
    assert names("command -v docker") == []
    assert names("command docker run") == ["docker"]
    assert names('"FOO=bar" docker') == ["FOO=bar"]  # a quoted name is not an assignment


def test_redirections_are_not_words() -> None:
    [command] = parse("docker run x >/tmp/out 2>&1 </dev/null")
    assert [w.text for w in command.words] == ["docker", "run", "x"]


def test_command_substitution_is_a_nested_script() -> None:
    text = 'ID=$(docker create --gpus all img) && echo "started `podman run b`" <(nerdctl run c)'
    found = commands(text)
    start = text.index("docker create")
    assert ("docker", start, start + len("docker create --gpus all img"), "docker create --gpus all img") in found
    assert ("podman", text.index("podman"), text.index("podman") + 12, "podman run b") in found
    assert ("nerdctl", text.index("nerdctl"), text.index("nerdctl") + 13, "nerdctl run c") in found
    assert [c.depth for c in parse(text) if c.name == "docker"] == [1]


def test_sh_c_string_is_parsed_with_offsets_in_the_outer_text() -> None:
    text = 'sh -c "echo hi; docker run --gpus \\"all\\" img"'
    found = commands(text)
    start = text.index("docker")
    assert found[2] == ("docker", start, len(text) - 1, 'docker run --gpus \\"all\\" img')
    inner = next(c for c in parse(text) if c.name == "docker")
    assert [w.text for w in inner.words] == ["docker", "run", "--gpus", "all", "img"]


def test_nested_shells_su_eval_and_options_after_c() -> None:
    text = "su -c 'bash -lc -- \"docker run x\"' root"
    start = text.index("docker")
    assert ("docker", start, start + 12, "docker run x") in commands(text)
    text = "bash -o pipefail -c 'podman run y'"
    assert "podman" in names(text)
    text = 'eval "docker run" z'
    assert [(n, s) for n, _, _, s in commands(text)] == [("eval", 'eval "docker run" z'), ("docker", 'docker run" z')]


def test_heredoc_bodies_are_data_unless_fed_to_a_shell() -> None:
    text = "cat <<EOF > /f\ndocker run a\nEOF\nbash <<'END'\n\tpodman run b\nEND\ncat <<-X\n\tnerdctl run c\n\tX\nlast"
    assert names(text) == ["cat", "bash", "podman", "cat", "last"]
    start = text.index("podman")
    assert ("podman", start, start + 12, "podman run b") in commands(text)


def test_arithmetic_is_not_a_command() -> None:
    assert names("((i++)); for ((i=0; i<3; i++)); do docker run $((i+1)); done") == ["docker"]


def test_unterminated_input_does_not_fail() -> None:
    for text in ("echo 'open", 'echo "open', "x=$(docker run", "echo `a", "cat <<EOF\nbody", "a ${b", "case x in"):
        parse(text)
    assert names("x=$(docker run") == ["docker"]


def test_deep_nesting_is_bounded() -> None:
    text = "$(" * 200 + "docker run x" + ")" * 200
    parse(text)
    text = "sh -c " + "'sh -c \"" * 30 + "docker run x"
    parse(text)


def test_command_index_on_exec_vectors() -> None:
    assert command_index(["FOO=1", "docker"]) == 0  # an exec vector has no shell assignments
    assert command_index(["env", "FOO=1", "docker", "run"]) == 2
    assert command_index(["/usr/bin/sudo", "-u", "me", "docker"]) == 3
    assert command_index(["nice", "-n", "5", "ionice", "-c", "3", "podman"]) == 6
    assert command_index(["timeout", "10", "docker"]) == 2
    assert command_index(["sudo"]) is None


def test_script_arguments() -> None:
    assert script_arguments(["sh", "-c", "x"]) == [2]
    assert script_arguments(["/bin/bash", "-ec", "x"]) == [2]
    assert script_arguments(["bash", "-lc", "--", "x"]) == [3]
    assert script_arguments(["bash", "-o", "pipefail", "-c", "x"]) == [4]
    assert script_arguments(["bash", "script.sh", "-c"]) == []
    assert script_arguments(["sh", "-c"]) == []
    assert script_arguments(["su", "-", "root", "-c", "x"]) == [4]
    assert script_arguments(["eval", "a", "b"]) == [1, 2]
    assert script_arguments(["python", "-c", "x"]) == []


_ALPHABET = st.sampled_from(list("abcdr xyz;&|()<>#\n\t'\"\\$`{}=-12") + ["docker ", "run ", "sh -c ", "<<E\n", "\nE\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_any_text_parses_and_every_offset_points_at_its_character(text: str) -> None:
    for command in parse(text):
        assert command.words
        for word in command.words:
            assert 0 <= word.start < word.end <= len(text)
            assert len(word.positions) == len(word.text)
            assert list(word.positions) == sorted(set(word.positions))
            for char, pos in zip(word.text, word.positions, strict=True):
                assert word.start <= pos < word.end
                assert text[pos] == char
