#!/usr/bin/env bash
# Installs the Debian packages the test suite talks to, when they are missing. Needs root (CI is root).
set -euo pipefail
need=()
[ -x /usr/bin/promtool ] || need+=(prometheus)
[ -x /lib/nut/dummy-ups ] || need+=(nut-server nut-client)
command -v pdftotext >/dev/null || need+=(poppler-utils)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing test peers: ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
