#!/bin/sh
# Installs the pinned aimock (package-lock.json) into bench/aimock/node_modules
# with npm ci, unless that exact version is already there.
set -eu
cd "$(dirname "$0")"
want=$(node -e 'console.log(require("./package-lock.json").packages["node_modules/@copilotkit/aimock"].version)')
have=$(node -e 'try{console.log(require("./node_modules/@copilotkit/aimock/package.json").version)}catch(e){console.log("")}')
if [ "$want" = "$have" ]; then
  echo "aimock $have already installed in bench/aimock" >&2
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
echo "installed aimock $want in bench/aimock" >&2
