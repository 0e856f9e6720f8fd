#!/bin/bash
# Install the Debian packages listed in mk/packages.txt that are missing.
# Idempotent: does nothing, quickly, when all are present; otherwise runs
# apt-get update once and installs only the missing ones.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

missing=()
while read -r pkg; do
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
	[ "${status:0:2}" = ii ] || missing+=("$pkg")
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/mk/packages.txt")

[ ${#missing[@]} = 0 ] && exit 0
note "installing: ${missing[*]}"
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
