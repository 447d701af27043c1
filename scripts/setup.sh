#!/usr/bin/env bash
# Set-up for development and CI: the package with its dev extras (its build hook builds the JupyterLab
# extension in extension/ with npm), and Chromium for the browser tests (installed with apt-get when run as
# root and Chromium is missing). Run it in a virtual environment: it installs into the active Python.
set -euo pipefail
cd "$(dirname "$0")/.."
if python3 -c 'import sys; sys.exit(sys.prefix != sys.base_prefix)'; then
    echo "setup: not in a virtual environment: installing into $(python3 -c 'import sys; print(sys.prefix)')." >&2
fi
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq chromium >/dev/null
    else
        echo "setup: Chromium not found; install it (Debian: apt-get install chromium) to run the browser tests." >&2
    fi
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "setup: npm not found; install Node.js 20.19+ with npm to build the JupyterLab extension." >&2
    exit 1
fi
# The extension's build is linked into this environment (what `jupyter labextension develop` does), so
# that `npm run build` in extension/ shows after a page reload. pip must not uninstall through the link.
link="$(python3 -c 'import sys; print(sys.prefix)')/share/jupyter/labextensions/kernel-lab"
if [ -L "$link" ]; then rm "$link"; fi
# The extension's packages exactly as package-lock.json pins them (npm ci never rewrites the lock); the build
# hook's own `npm install` then finds them in place and leaves the lock as it is.
(cd extension && npm ci --no-audit --no-fund)
python3 -m pip install -e ".[dev]"
python3 -c "from jupyter_builder.federated_extensions import develop_labextension as d
d('kernel_lab/labextension', overwrite=True, sys_prefix=True, destination='kernel-lab')"
jupyter labextension list 2>&1 | grep "kernel-lab v.*enabled.*OK" || {
    echo "setup: JupyterLab does not list the kernel-lab extension as enabled and OK." >&2
    exit 1
}
