#!/usr/bin/env bash
# The whole suite: install missing Debian peers, build the web client, run every test with tap.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/peers/install.sh
if [ -f core/web/vite.config.ts ]; then npm run --silent build:web >/dev/null; fi
exec npx tap "$@"
