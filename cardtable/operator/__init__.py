"""The operator's pages of ``referee run``: the table's own display (:mod:`.local`), pairing
phones (:mod:`.pairing`), and the site that serves them with the operator page, its API, the
set-up wizard and the table check (:mod:`.site`). Every change goes through
:mod:`cardtable.operations`, the console's path."""
