#!/usr/bin/env bash
# CI for the VS Code extension: install, bundle, lint, unit-test and package to a .vsix.
# The real-VS-Code end-to-end test (code-server + Chromium) runs only with IMPACT_E2E_VSCODE=1;
# it installs code-server into a cache folder once (scripts/install-code-server.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

step() {
  local name=$1 start
  shift
  start=$(date +%s)
  echo "::: vscode-client: $name"
  "$@"
  echo "::: vscode-client: $name done in $(($(date +%s) - start))s"
}

# --ignore-scripts: no dependency needs its install script here (esbuild finds its platform
# package without it), and @vscode/vsce-sign's would download a binary.
step "npm ci" npm ci --ignore-scripts --no-audit --no-fund
step compile npm run compile
step lint npm run lint
step "unit tests" npm test
step package npm run package
if [[ "${IMPACT_E2E_VSCODE:-0}" == 1 ]]; then
  step "install code-server" bash scripts/install-code-server.sh
  step "e2e in code-server" npm run test:e2e
fi
