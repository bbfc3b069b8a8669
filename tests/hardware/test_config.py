"""The GPIO pin map: valid maps load, every mistake is an error naming its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from hardware.config import ConfigError, HardwareConfig, load_config, loads_config, parse_pin

EXAMPLE = Path(__file__).resolve().parents[2] / "hardware" / "table.example.toml"

TWO_SEATS = """
[hardware]
pin_factory = "mock"

[[seats]]
name = "Anna"
slap = 17
call = 27
led = 22

[[seats]]
slap = "GPIO5"
"""


def test_example_file_loads_with_every_seat() -> None:
    cfg = load_config(EXAMPLE)
    assert [s.name for s in cfg.seats] == ["Anna", "Bo", "Cia", "Dan"]
    assert cfg.seats[0].slap == 17 and cfg.seats[0].call == 27 and cfg.seats[0].led == 22
    assert cfg.pull_up is True and cfg.active_state is None
    assert cfg.lockout_ns == 30_000_000 and cfg.stuck_ns == 5_000_000_000


def test_example_file_is_also_a_valid_referee_table_config() -> None:
    from cardtable.config import load_config as load_table

    table = load_table(EXAMPLE)
    assert len(table.seats) == len(load_config(EXAMPLE).seats)


def test_minimal_map_takes_defaults() -> None:
    cfg = loads_config(TWO_SEATS)
    assert cfg.pin_factory == "mock"
    assert cfg.seats[1].slap == 5 and cfg.seats[1].call is None and cfg.seats[1].led is None
    assert cfg.seats[1].name == "Seat 1"
    assert cfg.bounce_lockout_ms == 30 and cfg.stuck_ms == 5000


def test_seat_names_default_to_table_seats() -> None:
    cfg = loads_config('[table]\nseats = ["A", "B"]\n[[seats]]\nslap = 17\n[[seats]]\nslap = 18\n')
    assert [s.name for s in cfg.seats] == ["A", "B"]


@pytest.mark.parametrize(
    ("value", "bcm"),
    [(17, 17), ("GPIO17", 17), ("gpio17", 17), ("BCM4", 4), ("BOARD11", 17), ("J8:40", 21),
     ("BOARD3", 2), (27, 27), (2, 2)],
)
def test_pin_names(value: object, bcm: int) -> None:
    assert parse_pin(value, "k") == bcm


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (28, "not on the Raspberry Pi 40-pin header"),
        (40, "not on the Raspberry Pi 40-pin header"),
        (-1, "not on the Raspberry Pi 40-pin header"),
        (0, "HAT ID EEPROM"),
        ("BOARD27", "HAT ID EEPROM"),
        ("BOARD1", "3V3 power"),
        ("BOARD6", "ground"),
        ("BOARD41", "no header pin 41"),
        ("PIN17", 'unknown pin name "PIN17"'),
        ("GPIO", "unknown pin name"),
        (True, "must be a BCM GPIO number"),
        (17.0, "must be a BCM GPIO number"),
        ([17], "must be a BCM GPIO number"),
    ],
)
def test_bad_pins_are_named(value: object, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_pin(value, "seats[2].led")
    assert err.value.key == "seats[2].led"
    assert str(err.value).startswith("seats[2].led: ")
    assert words in str(err.value)


def _error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as err:
        loads_config(text)
    return err.value


def test_same_pin_twice_names_both_keys() -> None:
    err = _error("[[seats]]\nslap = 17\ncall = 27\n[[seats]]\nslap = 5\nled = \"BOARD13\"\n")
    assert err.key == "seats[1].led"
    assert "GPIO27 is already used by seats[0].call" in str(err)


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("[hardware]\n", "seats", "missing"),
        ("seats = 3\n", "seats", "array of tables"),
        ("[[seats]]\nname = 'A'\n", "seats[0].slap", "missing"),
        ("[[seats]]\nslap = 17\nbutton = 4\n", "seats[0].button", "unknown key"),
        ("[[seats]]\nslap = 17\nname = ''\n", "seats[0].name", "non-empty"),
        ("[[seats]]\nslap = 30\n", "seats[0].slap", "GPIO30"),
        ("[[seats]]\nslap = '17'\n", "seats[0].slap", "unknown pin name"),
        ("[hardware]\npin_factory = 'pigpio'\n[[seats]]\nslap = 17\n", "hardware.pin_factory",
         "lgpio, mock"),
        ("[hardware]\npullup = true\n[[seats]]\nslap = 17\n", "hardware.pullup", "unknown key"),
        ("[hardware]\npull_up = 'yes'\n[[seats]]\nslap = 17\n", "hardware.pull_up",
         "true, false or \"none\""),
        ("[hardware]\npull_up = 'none'\n[[seats]]\nslap = 17\n", "hardware.active_state",
         "required"),
        ("[hardware]\nactive_state = 'low'\n[[seats]]\nslap = 17\n", "hardware.active_state",
         "only applies"),
        ("[hardware]\npull_up = 'none'\nactive_state = 1\n[[seats]]\nslap = 17\n",
         "hardware.active_state", "\"high\", \"low\""),
        ("[hardware]\nbounce_lockout_ms = '30'\n[[seats]]\nslap = 17\n",
         "hardware.bounce_lockout_ms", "number of milliseconds"),
        ("[hardware]\nbounce_lockout_ms = 0\n[[seats]]\nslap = 17\n",
         "hardware.bounce_lockout_ms", "between 1 and 500"),
        ("[hardware]\nstuck_ms = true\n[[seats]]\nslap = 17\n", "hardware.stuck_ms",
         "number of milliseconds"),
        ("[hardware]\nstuck_ms = 200\nbounce_lockout_ms = 300\n[[seats]]\nslap = 17\n",
         "hardware.stuck_ms", "longer than bounce_lockout_ms"),
        ("[hardware]\nled_active_high = 1\n[[seats]]\nslap = 17\n", "hardware.led_active_high",
         "true or false"),
        ("[hardware]\nlgpio_workdir = 'run'\n[[seats]]\nslap = 17\n", "hardware.lgpio_workdir",
         "absolute"),
        ("[hardware]\ngpiochip = -1\n[[seats]]\nslap = 17\n", "hardware.gpiochip", ">= 0"),
        ("[hardware]\npull_up = false\n[[seats]]\nslap = 2\n", "seats[0].slap",
         "fixed pull-up"),
        ("hardware = 1\n[[seats]]\nslap = 17\n", "hardware", "must be a table"),
        ("[table]\nseats = ['A', 'B']\n[[seats]]\nslap = 17\n", "seats",
         "1 [[seats]] entries for the 2 seats"),
        ("[[seats]\nslap = 17\n", "<toml>", ""),
    ],
)
def test_errors_name_the_key(text: str, key: str, words: str) -> None:
    err = _error(text)
    assert err.key == key
    assert str(err).startswith(f"{key}: ")
    assert words in str(err)


def test_nine_seats_are_too_many() -> None:
    text = "".join(f"[[seats]]\nslap = {p}\n" for p in range(2, 11))
    assert _error(text).key == "seats"


def test_led_on_a_fixed_pull_up_pin_is_fine_with_pull_down_buttons() -> None:
    cfg = loads_config("[hardware]\npull_up = false\n[[seats]]\nslap = 17\nled = 2\n")
    assert cfg.seats[0].led == 2 and cfg.pull_up is False


def test_external_resistors_with_active_state() -> None:
    cfg = loads_config("[hardware]\npull_up = 'none'\nactive_state = 'high'\n[[seats]]\nslap = 4\n")
    assert cfg.pull_up is None and cfg.active_state is True


def test_load_config_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text("[[seats]]\nslap = 99\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert err.value.key == "seats[0].slap" and str(path) in str(err.value)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")


def test_environment_chooses_the_pin_factory() -> None:
    cfg = HardwareConfig(seats=())
    assert cfg.factory_name({}) == "lgpio"
    assert cfg.factory_name({"GPIOZERO_PIN_FACTORY": "mock"}) == "mock"
    with pytest.raises(ConfigError) as err:
        cfg.factory_name({"GPIOZERO_PIN_FACTORY": "rpigpio"})
    assert err.value.key == "GPIOZERO_PIN_FACTORY"
