"""The table configuration's errors read as a person wrote the file: TOML spellings, the file
and the key, nothing of Python (issue 10.15); and what MQTT or the board cannot take is refused
up front (issue 10.16)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from cardtable.config import load_config, parse_config
from referee.errors import ConfigError

PYTHON = re.compile(r"\b(True|False|None|int|float|str|bool)\b")


def _table(**table: Any) -> dict[str, Any]:
    return {"table": {"id": "t", "game": "vandatta", "seats": ["A", "B"], **table}}


@pytest.mark.parametrize(("raw", "words"), [
    (_table(dealer=True), "table.dealer: must be a whole number, got true"),
    (_table(settle_ms="x"), 'table.settle_ms: must be a number, got "x"'),
    (_table(seats="A B"), 'table.seats: must be a list, got "A B"'),
    (_table(seed=1.5), "table.seed: must be a whole number, got 1.5"),
    (_table(console_socket=False), "table.console_socket: must be text, got false"),
    (dict(_table(), options={"lappen": "yes"}),
     'options.lappen: must be true or false, got "yes"'),
    (dict(_table(), broker="x"), 'broker: must be a section'),
    # the wizard wrote this when no board was found, and the table looked for '' for ever
    (dict(_table(card_source="board"), board={"port": ""}), "board.port: is empty: the "
     "board's device path (/dev/ttyACM0) or a pyserial URL (socket://host:port)"),
    (_table(seats=["Anna", "Anna"]),
     'table.seats[1]: "Anna" is already the name of seat 0: each seat needs a name of its own'),
    (_table(seats=["Anna", " anna "]),
     'table.seats[1]: " anna " is already the name of seat 0: each seat needs a name of its own'),
    (_table(seats=["Anna", ""]), "table.seats[1]: must not be empty: every seat needs a name"),
    (_table(seats=["  ", "Bo"]), "table.seats[0]: must not be empty: every seat needs a name"),
    (_table(seats=["Anna", 7]), "table.seats[1]: must be a name in quotes, got 7"),
    (_table(seats=["Anna", "B\x07o"]),
     'table.seats[1]: "B\\u0007o" must not contain control characters or direction marks'),
    (_table(seats=["Anna", "B" * 41]),
     f'table.seats[1]: "{"B" * 41}" is 41 characters long; at most 40'),
])
def test_config_errors_spell_values_as_toml_does(raw: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(raw, "table.toml")
    text = str(info.value)
    assert text == f"table.toml: {words}"
    assert not PYTHON.search(text.split(": ", 1)[1]), text


def test_an_error_about_the_whole_file_has_no_key(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[table\n")
    with pytest.raises(ConfigError) as info:
        load_config(broken)
    assert str(info.value).startswith(f"{broken}: not valid TOML: ")
    assert info.value.key is None
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "missing.toml")
    assert str(info.value) == f"{tmp_path / 'missing.toml'}: cannot read the file: " \
        "No such file or directory"
    broken.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError) as info:
        load_config(broken)
    assert ": -:" not in str(info.value)


@pytest.mark.parametrize(("table_id", "words"), [
    ("", "empty"),
    ("a/b#", "/"),
    ("a+b", "+"),
    ("a\0b", "U+0000"),
    ("a\x1bb", "control"),
    ("x" * 65_519, "65518 bytes"),
    ("å" * 32_760, "65518 bytes"),
    ("   ", "blank"),
    ("\u202egnp.exe", "direction marks"),
], ids=["empty", "slash-hash", "plus", "nul", "escape", "long-ascii", "long-utf8", "blank",
        "right-to-left-override"])
def test_a_table_id_mqtt_cannot_carry_is_refused(table_id: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(_table(id=table_id), "table.toml")
    assert str(info.value).startswith("table.toml: table.id: ")
    assert words in str(info.value)
    from cardtable.config import table_id_problem

    problem = table_id_problem(table_id)
    assert problem is not None and words in problem


def test_a_table_id_mqtt_can_carry_is_accepted() -> None:
    from cardtable.config import table_id_problem

    for table_id in ("t1", "Köket bord 2", "x" * 65_518):
        assert table_id_problem(table_id) is None
        assert parse_config(_table(id=table_id)).table_id == table_id


@pytest.mark.parametrize(("reader", "words"), [
    (-1, "must be a reader number 0..254, got -1"),
    (255, "must be a reader number 0..254, got 255"),
    (True, "must be a whole number, got true"),
])
def test_stock_reader_must_be_a_reader_number(reader: object, words: str) -> None:
    raw = dict(_table(), board={"port": "/dev/null", "stock_reader": reader})
    with pytest.raises(ConfigError) as info:
        parse_config(raw, "table.toml")
    assert str(info.value) == f"table.toml: board.stock_reader: {words}"
    raw["board"]["stock_reader"] = 0  # type: ignore[index]
    assert parse_config(raw, "table.toml").stock_reader == 0


@pytest.mark.parametrize(("key", "value", "words"), [
    ("bounce_lockout_ms", True, "got true"),
    ("pull_up", "maybe", 'got "maybe"'),
    ("pin_factory", False, "got false"),
])
def test_hardware_errors_spell_values_as_toml_does(key: str, value: object, words: str) -> None:
    from hardware.config import parse_config as parse_hardware

    with pytest.raises(ConfigError) as info:
        parse_hardware({"hardware": {key: value}, "seats": [{"slap": 17}]})
    assert words in str(info.value) and not PYTHON.search(str(info.value)), str(info.value)


def test_the_feed_takes_the_same_table_ids_as_the_configuration() -> None:
    from cardtable.feed import Topics

    for table_id in ("a\0b", "x" * 65_519, "a/b#"):
        with pytest.raises(ValueError, match="^table id "):
            Topics(table_id)
    assert Topics("x" * 65_518).status.endswith("/status")


def test_the_configuration_base_is_absolute(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 15.5: lgpio chdirs into LG_WD after the configuration is read, so every path it
    names is made absolute from the file's own folder at once."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "table.toml").write_text(
        '[table]\nid = "t"\ngame = "beggar-my-neighbour"\nseats = ["a", "b"]\n'
        'console_socket = "console.sock"\n\n[board]\nport = "/dev/null"\ndeck = "deck.json"\n')
    monkeypatch.chdir(tmp_path)
    config = load_config("etc/table.toml")
    assert config.journal_dir == tmp_path / "etc" / "journals"
    assert config.deck_file == tmp_path / "etc" / "deck.json"
    assert config.console_socket == tmp_path / "etc" / "console.sock"


def test_files_sockets_and_ports_the_table_cannot_use_are_said_in_words(tmp_path: Path) -> None:
    """Found by a hostile-input probe: the errno's form, a socket path the kernel refuses (a
    temporary failure naming an internal class), and a port range that said 1.. but took 0."""
    def said(raw: dict[str, Any]) -> str:
        with pytest.raises(ConfigError) as info:
            parse_config(raw, str(tmp_path / "table.toml"))
        return str(info.value)

    broker = {"url": "mqtt://127.0.0.1:1883"}
    missing = said(dict(_table(), broker={**broker, "password_file": "nope.txt"}))
    assert "broker.password_file: cannot read" in missing and "nope.txt: No such file" in missing
    assert "Errno" not in missing
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe")
    assert "bin.txt is not UTF-8 text" in said(
        dict(_table(), broker={**broker, "password_file": str(tmp_path / "bin.txt")}))
    long = said(_table(console_socket="s" * 200))
    assert "table.console_socket: is" in long and "a Unix socket's path holds at most 107" in long
    assert "web.port: must be a port number 0..65535 (0: any free one), got -1" in said(
        dict(_table(), web={"port": -1}))
