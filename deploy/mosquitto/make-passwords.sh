#!/bin/sh
# Create (or update) the Mosquitto password file for the card table feed with mosquitto_passwd.
#
#   sh make-passwords.sh [PASSWORD_FILE]
#
# Asks for the passwords of the users 'referee' and 'display', or takes them from the
# environment variables REFEREE_PASSWORD and DISPLAY_PASSWORD (for scripted installs).
# Default file: /etc/mosquitto/cardtable.passwd. Mosquitto stores salted hashes only.
set -eu

FILE=${1:-/etc/mosquitto/cardtable.passwd}
command -v mosquitto_passwd >/dev/null 2>&1 || {
  echo "mosquitto_passwd not found: apt-get install -y mosquitto" >&2
  exit 1
}

umask 077
[ -e "$FILE" ] || : > "$FILE"

add_user() {
  user=$1
  pw=$2
  if [ -n "$pw" ]; then
    mosquitto_passwd -b "$FILE" "$user" "$pw"
  else
    echo "Password for '$user':"
    mosquitto_passwd "$FILE" "$user"
  fi
}

add_user referee "${REFEREE_PASSWORD:-}"
add_user display "${DISPLAY_PASSWORD:-}"

# The broker runs as the 'mosquitto' user on Debian: let it read the file, nobody else.
if id mosquitto >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  chown root:mosquitto "$FILE"
  chmod 0640 "$FILE"
fi
echo "wrote $FILE (users: referee, display)"
