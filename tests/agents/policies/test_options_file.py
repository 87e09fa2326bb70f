"""`read_options_file`: the --policy-options file of wmrl train, bench and sft."""

from pathlib import Path

import pytest
from wmrl_agents.policies.options_file import read_options_file

from wmrl_envs.errors import WmrlError


def test_a_yaml_mapping_is_read_and_no_file_means_no_options(tmp_path: Path) -> None:
    path = tmp_path / "options.yaml"
    path.write_text("generation: server\nserver_url: http://127.0.0.1:8000/v1\n", encoding="utf-8")
    assert read_options_file(path, "--policy-options") == {
        "generation": "server",
        "server_url": "http://127.0.0.1:8000/v1",
    }
    assert read_options_file(None, "--policy-options") == {}


@pytest.mark.parametrize(
    ("text", "says"),
    [("generation: [server\n", "not valid YAML"), ("- a\n- b\n", "must hold a mapping")],
)
def test_a_corrupt_or_wrongly_shaped_file_names_the_flag_and_the_file(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "options.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(WmrlError, match=says) as raised:
        read_options_file(path, "--policy-options")
    assert "--policy-options" in str(raised.value) and str(path) in str(raised.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="--policy-options file .* does not exist"):
        read_options_file(tmp_path / "absent.yaml", "--policy-options")
