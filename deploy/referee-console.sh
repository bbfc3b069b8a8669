#!/bin/sh
# Run the table's referee with its operator console in this terminal, in place of the service.
#
#   sudo sh deploy/referee-console.sh [CONFIG]      (default /etc/card-referee/table.toml)
#
# Under systemd the referee has no console (--no-console). This stops card-referee.service,
# runs `referee run` as the user referee with the service's environment (LG_WD, the variables
# of /etc/card-referee/environment such as CARDTABLE_MQTT_PASSWORD) so that it resumes the very
# same game from its journal, and starts the service again afterwards if it was running.
# Type 'help' at the console; 'quit' or Ctrl-C ends it. See docs/install.md.
set -eu

CONFIG=${1:-/etc/card-referee/table.toml}
VENV=${CARD_REFEREE_VENV:-/opt/card-referee}
UNIT=card-referee.service
RUNDIR=${CARD_REFEREE_RUNDIR:-/run/card-referee}
STATEDIR=${CARD_REFEREE_STATEDIR:-/var/lib/card-referee}
ENVFILE=${CARD_REFEREE_ENVFILE:-/etc/card-referee/environment}

if [ "$(id -u)" != 0 ]; then
  echo "run as root: sudo sh $0 $*" >&2
  exit 1
fi
[ -r "$CONFIG" ] || { echo "cannot read $CONFIG" >&2; exit 1; }
# Its real path: the referee runs in $STATEDIR (and lgpio moves into $RUNDIR), where a
# relative name would mean another file.
CONFIG=$(readlink -f -- "$CONFIG")
[ -x "$VENV/bin/referee" ] || { echo "$VENV/bin/referee not found (docs/install.md)" >&2; exit 1; }

was_active=no
if systemctl is-active --quiet "$UNIT"; then
  was_active=yes
  echo "stopping $UNIT (the game is kept in its journal)"
  systemctl stop "$UNIT"
fi

restart() {
  if [ "$was_active" = yes ]; then
    echo "starting $UNIT again"
    systemctl start "$UNIT"
  fi
}
trap restart EXIT
# Ctrl-C goes to the referee, which stops cleanly; this shell only waits for it. (A trap with a
# command, unlike an ignored signal, is not inherited: the referee gets the usual SIGINT.)
trap ':' INT

# What the unit's RuntimeDirectory= and StateDirectory= would make.
install -d -o referee -g referee -m 0750 "$RUNDIR" "$STATEDIR"

# The unit's EnvironmentFile= (KEY=VALUE lines), exported to the referee only.
if [ -r "$ENVFILE" ]; then
  set -a
  # shellcheck disable=SC1090
  . "$ENVFILE"
  set +a
fi
export LG_WD="$RUNDIR"

cd "$STATEDIR"
status=0
runuser -u referee -- "$VENV/bin/referee" run --config "$CONFIG" || status=$?
exit "$status"
