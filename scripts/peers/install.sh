#!/usr/bin/env bash
# Installs the Debian packages the test suite talks to, when they are missing. Needs root (CI is root).
set -euo pipefail
need=()
# prometheus ships both promtool and the server the real-client tests scrape with.
{ [ -x /usr/bin/promtool ] && [ -x /usr/bin/prometheus ]; } || need+=(prometheus)
[ -x /usr/bin/prometheus-alertmanager ] || need+=(prometheus-alertmanager)
[ -x /usr/bin/apprise ] || need+=(apprise)
# The SMTP peer runs under Debian's own python3, whatever python3 comes first on PATH.
/usr/bin/python3 -c 'import aiosmtpd' >/dev/null 2>&1 || need+=(python3-aiosmtpd)
[ -x /lib/nut/dummy-ups ] || need+=(nut-server nut-client)
# The dialect peers: an MQTT broker with its command-line clients, and an SMTP client.
[ -x /usr/sbin/mosquitto ] || need+=(mosquitto)
command -v mosquitto_pub >/dev/null || need+=(mosquitto-clients)
command -v swaks >/dev/null || need+=(swaks)
# swaks speaks STARTTLS through Net::SSLeay, which it only recommends.
perl -MNet::SSLeay -e 1 >/dev/null 2>&1 || need+=(libnet-ssleay-perl)
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
