#!/usr/bin/env bash
# Set-up for development and CI: the package with its dev extras, and Chromium for the browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq chromium >/dev/null
    else
        echo "setup: Chromium not found; install it (Debian: apt-get install chromium) to run the browser tests." >&2
    fi
fi
python3 -m pip install -e ".[dev]"
