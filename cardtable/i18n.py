"""The languages of the table: gettext catalogs shipped with the program, the language a table,
a command or a page asks for, and the words of the web pages.

The words are English in the sources, marked for translation (``tr.gettext``/``tr.ngettext``
in Python, :func:`referee.describe.N_` in tables; ``t``/``tn`` in the pages' JavaScript and
``data-i18n`` in their HTML). Babel extracts them (``make messages``) into two templates under
``cardtable/locale/``: ``referee.pot`` (the Python words: verdicts, displays, commands) and
``pages.pot`` (the pages' own static words, which a page fetches as ``catalog.json``). Each
language is a folder ``cardtable/locale/<code>/LC_MESSAGES/`` with its ``referee.po`` and
``pages.po`` and their compiled ``.mo`` (``make catalogs``); the ``.mo`` files ship in the wheel
and are read with the standard library's :mod:`gettext` (Babel is only a tool of the
developers). A language is known once its folder holds a compiled ``referee.mo``: adding one
needs no code (docs/i18n.md).

The table's language is a presentation setting, never a rule: ``language`` in ``table.toml``'s
``[table]`` (or ``-o language=sv`` on the command line, taken out before the game's options are
read), so no journal header and no verdict depends on it. Without one, the system locale's
language (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``) when there is a catalog for it,
else English.
"""

from __future__ import annotations

import errno
import gettext
import html.parser
import os
import re
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

from referee.describe import ENGLISH, N_, Translator
from referee.errors import OptionError, shown

#: Where the catalogs are: ``<code>/LC_MESSAGES/<domain>.mo``.
LOCALE_DIR = Path(__file__).with_name("locale")
#: The domain of the Python words, and of the pages' static words.
DOMAIN, PAGES_DOMAIN = "referee", "pages"
#: The language the sources are written in (no catalog).
SOURCE = "en"
#: The option that names the table's language (``-o language=sv``, ``[table] language``).
OPTION = "language"


def languages(locale_dir: Path | None = None) -> tuple[str, ...]:
    """Every language with words: English and each folder with a compiled catalog."""
    found = _languages(str(locale_dir or LOCALE_DIR))
    return tuple(sorted({SOURCE, *found}))


@lru_cache(maxsize=8)
def _languages(locale_dir: str) -> tuple[str, ...]:
    root = Path(locale_dir)
    if not root.is_dir():
        return ()
    return tuple(sorted(p.name for p in root.iterdir()
                        if (p / "LC_MESSAGES" / f"{DOMAIN}.mo").is_file()))


def normalize(code: str) -> str:
    """A language as the catalogs name it: ``sv_SE.UTF-8``, ``sv-SE`` and ``SV`` are ``sv``;
    ``C`` and ``POSIX`` (no language) are English."""
    base = code.strip().split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    return SOURCE if base in ("c", "posix", "") else base


def system_language(environ: Mapping[str, str] | None = None,
                    locale_dir: Path | None = None) -> str:
    """The system locale's language, as :mod:`gettext` looks for it (``LANGUAGE``, a list,
    then ``LC_ALL``, ``LC_MESSAGES``, ``LANG``), when there are words for it; else English."""
    env = os.environ if environ is None else environ
    known = languages(locale_dir)
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var)
        if not value:
            continue
        for part in value.split(":"):
            code = normalize(part)
            if code in known:
                return code
        if var != "LANGUAGE":
            return SOURCE  # the first variable set decides (as for setlocale)
    return SOURCE


#: What a language asked for looks like: ``sv``, ``sv_SE``, ``sv-SE``, ``sv_SE.UTF-8``,
#: ``sr@latin``, ``C``, ``POSIX`` (``../../etc`` and the empty text are none of them).
LOCALE_NAME = re.compile(r"(?:[A-Za-z]{2,3}(?:[_-][A-Za-z0-9]{2,8})?(?:\.[\w-]+)?(?:@\w+)?"
                         r"|C|POSIX)")


def check_language(value: Any, locale_dir: Path | None = None) -> str:
    """A language asked for (``sv``, ``sv_SE``): its code, or an :class:`OptionError` naming
    ``language`` and the languages there are."""
    known = languages(locale_dir)
    if isinstance(value, str) and LOCALE_NAME.fullmatch(value.strip()) \
            and normalize(value) in known:
        return normalize(value)
    raise OptionError(OPTION, f"no words in {shown(value)}: the languages are "
                      f"{', '.join(known)}")


@dataclass(frozen=True)
class Language:
    """A language: its ``code`` and its words (a :class:`~referee.describe.Translator`, so a
    :class:`Language` is passed wherever one is: ``describe(v, seats, lang)``)."""

    code: str
    words: Translator

    def gettext(self, message: str, /) -> str:
        return self.words.gettext(message)

    def ngettext(self, singular: str, plural: str, n: int, /) -> str:
        return self.words.ngettext(singular, plural, n)


#: English: the words as written.
ENGLISH_LANGUAGE = Language(SOURCE, ENGLISH)


def language(code: str | None = None, locale_dir: Path | None = None) -> Language:
    """The :class:`Language` of ``code`` (checked: :func:`check_language`), or of the system
    locale when ``code`` is None."""
    root = locale_dir or LOCALE_DIR
    chosen = system_language(locale_dir=root) if code is None else check_language(code, root)
    return _language(chosen, str(root))


@lru_cache(maxsize=16)
def _language(code: str, locale_dir: str) -> Language:
    if code == SOURCE:
        return ENGLISH_LANGUAGE
    return Language(code, gettext.translation(DOMAIN, locale_dir, languages=[code]))


def language_names(locale_dir: Path | None = None) -> list[list[str]]:
    """Each language with words and its name in itself: ``[["en", "English"], ["sv",
    "Svenska"]]`` (a catalog's translation of the message ``English``)."""
    return [[code, language(code, locale_dir).gettext(NAME)]
            for code in languages(locale_dir)]


#: The message each catalog translates as its language's own name.
# Translators: the name of your language, in your language (Svenska, Deutsch, …).
NAME = N_("English")


def forget() -> None:
    """Read the catalogs again at the next use (a test that made a language)."""
    _languages.cache_clear()
    _language.cache_clear()
    page_catalog.cache_clear()


def take_language(options: dict[str, Any]) -> str | None:
    """Take ``language`` out of a table's options (``[options]`` of a configuration), so that
    the game's options never see it: the code, checked, or None when there is none."""
    if OPTION not in options:
        return None
    return check_language(options.pop(OPTION))


def table_language(assignments: list[str], lang: str | None = None) -> tuple[list[str], Language]:
    """The ``-o KEY=VALUE`` of a command without ``language=…``, and the language: the one
    ``-o language=`` names, else ``lang`` (``--lang``), else the system's. An
    :class:`OptionError` for a language without words, or two that differ."""
    rest, named = [], None
    for text in assignments:
        key, _, value = text.partition("=")
        if key.strip() == OPTION:
            named = check_language(value.strip())
        else:
            rest.append(text)
    if named is not None and lang is not None and check_language(lang) != named:
        raise OptionError(OPTION, f"-o language={named} and --lang {lang} differ: give one")
    return rest, language(named or lang)


@dataclass(frozen=True)
class Words:
    """A sentence to be said in any language: its English ``message`` (marked for translation
    where it is written: ``Words(N_("…"), …)``) and the ``values`` of its placeholders;
    ``str()`` is the English."""

    message: str
    values: Mapping[str, Any] = field(default_factory=dict)

    def say(self, tr: Translator = ENGLISH) -> str:
        """The sentence in ``tr``'s language (a value that is :class:`Words` said in it too)."""
        return tr.gettext(self.message).format(**{
            k: v.say(tr) if isinstance(v, Words) else v for k, v in self.values.items()})

    def __str__(self) -> str:
        return self.say()


#: What the system's errors a person at the table meets say, in words of our own that the
#: catalogs translate (the system says them in English whatever the table's language).
OS_WORDS = {
    errno.ENOSPC: N_("the disk is full"),
    errno.EDQUOT: N_("the disk is full"),
    errno.EACCES: N_("no permission"),
    errno.EPERM: N_("no permission"),
    errno.EROFS: N_("the file system is read-only"),
    errno.ENOENT: N_("no such file or folder"),
    errno.ENOTDIR: N_("a part of the path is not a folder"),
    errno.EISDIR: N_("it is a folder"),
    errno.EIO: N_("input/output error: the disk or the device failed"),
    errno.ENODEV: N_("no such device"),
    errno.ENXIO: N_("no such device"),
    errno.EBUSY: N_("in use by another program"),
}


def os_words(exc: OSError) -> Words | str:
    """Why the system refused, as :class:`Words` where it is one :data:`OS_WORDS` knows; else
    the system's own words."""
    if exc.errno in OS_WORDS:
        return Words(OS_WORDS[exc.errno])
    return exc.strerror or str(exc) or type(exc).__name__


def said(thing: object, tr: Translator = ENGLISH) -> str:
    """What an answer or an error says, in ``tr``'s language when it carries
    :class:`Words` (a :class:`Words`, or an exception with ``words``), else its text."""
    if isinstance(thing, Words):
        return thing.say(tr)
    words = getattr(thing, "words", None)
    if isinstance(words, Words):
        return words.say(tr)
    return str(thing)


# --------------------------------------------------------------------------- the pages' words


def read_mo(fh: IO[bytes]) -> dict[str, str | list[str]]:
    """A compiled catalog's messages: ``msgid`` → ``msgstr``, or the list of plural forms
    (keyed by the singular); the header under ``""``."""
    data = fh.read()
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">"
    _, n, originals, translations = struct.unpack(order + "4I", data[4:20])
    out: dict[str, str | list[str]] = {}
    for i in range(n):
        olen, ooff = struct.unpack(order + "2I", data[originals + 8 * i:originals + 8 * i + 8])
        tlen, toff = struct.unpack(order + "2I",
                                   data[translations + 8 * i:translations + 8 * i + 8])
        msgid = data[ooff:ooff + olen].decode("utf-8")
        msgstr = data[toff:toff + tlen].decode("utf-8")
        if "\x00" in msgid:
            out[msgid.split("\x00")[0]] = msgstr.split("\x00")
        else:
            out[msgid] = msgstr
    return out


def _plural_rule(header: str) -> Callable[[int], int]:
    for line in header.splitlines():
        if line.lower().startswith("plural-forms:"):
            expr = line.split("plural=", 1)[1].strip().rstrip(";")
            return gettext.c2py(expr)
    return lambda n: int(n != 1)


@lru_cache(maxsize=16)
def page_catalog(code: str, locale_dir: str | None = None) -> dict[str, Any]:
    """The pages' words in ``code``, as the pages fetch them (``catalog.json``): ``lang``,
    ``messages`` (English → the language; a plural message → its forms) and ``plural``: the
    form of each count 0..199 (a count ``n`` of 200 or more takes the form of
    ``100 + n % 100``: every gettext plural rule depends on ``n`` only through its last two
    digits and comparisons below 100), so that the page needs no rule of its own."""
    root = Path(locale_dir) if locale_dir else LOCALE_DIR
    if code == SOURCE:
        return {"lang": SOURCE, "messages": {}, "plural": [int(n != 1) for n in range(200)]}
    with open(root / code / "LC_MESSAGES" / f"{PAGES_DOMAIN}.mo", "rb") as fh:
        messages = read_mo(fh)
    header = messages.pop("", "")
    rule = _plural_rule(header if isinstance(header, str) else "")
    return {"lang": code, "messages": {k: v for k, v in messages.items() if v},
            "plural": [rule(n) for n in range(200)]}


# --------------------------------------------------------------------------- extraction


class _MarkedText(html.parser.HTMLParser):
    """The words of an HTML page marked for translation: the text of each element with a
    ``data-i18n`` attribute (its whitespace folded), and the attributes a
    ``data-i18n-attrs`` names (``alt``, ``aria-label``, ``placeholder``, ``title``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str]] = []
        self._open: list[tuple[str, int, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = dict(attrs)
        line = self.getpos()[0]
        for name in (given.get("data-i18n-attrs") or "").split():
            value = given.get(name)
            if value:
                self.found.append((line, " ".join(value.split())))
        if "data-i18n" in given:
            self._open.append((tag, line, []))

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1][2].append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1][0] == tag:
            _, line, parts = self._open.pop()
            text = " ".join("".join(parts).split())
            if text:
                self.found.append((line, text))


def extract_html(fileobj: IO[bytes], keywords: Any, comment_tags: Any,
                 options: Any) -> Iterator[tuple[int, None, str, list[str]]]:
    """Babel's extraction method for the pages' HTML (``cardtable/locale/pages.cfg``)."""
    parser = _MarkedText()
    parser.feed(fileobj.read().decode(options.get("encoding", "utf-8")))
    parser.close()
    for line, text in parser.found:
        yield line, None, text, []
