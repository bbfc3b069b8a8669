"""``referee display``: a table display that follows the MQTT feed (:mod:`cardtable.feed`).

In a terminal it draws, with rich, what docs/rules.md "What the referee says" lists: whose turn it
is, the top cards of the pile (and Banka bäver's bottom card), the cards per seat, an open
challenge with who owes how many, the last verdicts in plain words (slaps, illegal plays with
their reasons), players out, round scores and the winner, and a "referee offline" banner from the
``status`` topic. With ``--web`` it serves a page (``display/web/``) that shows the same in
large type in a browser: the command follows the broker and streams the page what to show.

- :mod:`.check`: what a display accepts (size, JSON, the types of the keys it draws);
- :mod:`.view`: :class:`~.view.TableView`, what a display knows of a table;
- :mod:`.scene`: :func:`~.scene.scene`, what a display shows, as data, for both displays;
- :mod:`.render`: :func:`~.render.render`, the terminal's drawing of a scene, a pure function
  of (state, recent events, status);
- :mod:`.follow`: the subscription loop, which re-reads the retained ``state`` on a ``seq`` gap
  or a new ``session``;
- :mod:`.web`: the web page's HTTP server and its stream of scenes (server-sent events).

The command line is :mod:`cardtable.commands.display`.
"""
