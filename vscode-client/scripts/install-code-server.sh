#!/usr/bin/env bash
# Install code-server 4.100.3 (VS Code 1.100.3, the last release for Node 20) into a cache folder,
# once, for the end-to-end test. Prints the install folder on stdout as its last line.
#
# The npm registry carries code-server but not the desktop VS Code, and its postinstall would
# download prebuilt binaries (ripgrep, node-pre-gyp artefacts) from hosts this machine cannot
# reach; so we install with --ignore-scripts, rebuild the native modules from source against the
# system Node headers, and link Debian's rg where @vscode/ripgrep expects its binary.
#
# Idempotent: a finished install leaves a .complete marker and a second run only checks it.
# Environment: IMPACT_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/impact-ls),
#              IMPACT_SKIP_APT=1 to skip the apt-get step (tools already present).
set -euo pipefail

VERSION=4.100.3
CACHE_DIR="${IMPACT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/impact-ls}"
DEST="$CACHE_DIR/code-server-$VERSION"
MARKER="$DEST/.complete"

log() { printf '[install-code-server] %s\n' "$*" >&2; }

if [[ -f "$MARKER" && -x "$DEST/package/out/node/entry.js" ]]; then
  log "already installed in $DEST"
  echo "$DEST"
  exit 0
fi

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [[ "$node_major" != 20 ]]; then
  log "code-server $VERSION needs Node 20, found $(node --version)"
  exit 1
fi

if [[ "${IMPACT_SKIP_APT:-0}" != 1 ]]; then
  need=()
  for pkg in build-essential libkrb5-dev ripgrep chromium; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
  done
  if ((${#need[@]})); then
    log "apt-get install ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
  fi
fi
command -v rg >/dev/null || { log "ripgrep (rg) is missing"; exit 1; }
[[ -f /usr/include/node/node.h ]] || { log "Node headers missing in /usr/include/node"; exit 1; }

# A folder of this run's own: two installs at once (parallel CI jobs on one machine) must not
# build in, or delete, each other's tree; the first to finish wins and the other reuses it.
mkdir -p "$CACHE_DIR"
WORK="$(mktemp -d "$DEST.partial.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
log "npm pack code-server@$VERSION"
(cd "$WORK" && npm pack --silent "code-server@$VERSION" >/dev/null && tar xzf "code-server-$VERSION.tgz" && rm "code-server-$VERSION.tgz")
PKG="$WORK/package"

export npm_config_nodedir=/usr
export npm_config_build_from_source=true
export npm_config_audit=false
export npm_config_fund=false
export npm_config_update_notifier=false
export JOBS="${JOBS:-2}"
# node-pty's postinstall runs `npx node-gyp configure`; let npx take node-gyp from the registry.
export npm_config_yes=true

for dir in "$PKG" "$PKG/lib/vscode" "$PKG/lib/vscode/extensions"; do
  log "npm install --omit=dev --ignore-scripts in ${dir#"$WORK"/}"
  (cd "$dir" && npm install --omit=dev --ignore-scripts --no-audit --loglevel=error >&2)
done

# Native modules, built from source; the Windows-only ones are left unbuilt on purpose.
log "rebuilding argon2 from source"
(cd "$PKG" && npm rebuild argon2 --build-from-source --loglevel=error >&2)
log "rebuilding VS Code native modules from source (slow on 2 cores)"
(cd "$PKG/lib/vscode" && npm rebuild @vscode/spdlog @vscode/deviceid kerberos native-watchdog node-pty @parcel/watcher \
  --build-from-source --loglevel=error >&2)

log "linking Debian's rg for @vscode/ripgrep"
mkdir -p "$PKG/lib/vscode/node_modules/@vscode/ripgrep/bin"
ln -sf "$(command -v rg)" "$PKG/lib/vscode/node_modules/@vscode/ripgrep/bin/rg"

# What postinstall.sh would have done besides installing.
(cd "$PKG/lib/vscode" && rm -rf node_modules.asar && ln -s node_modules node_modules.asar)
(cd "$PKG/lib/vscode/bin/remote-cli" && rm -f code-server && ln -s code-linux.sh code-server)
(cd "$PKG/lib/vscode/bin/helpers" && rm -f browser.sh && ln -s browser-linux.sh browser.sh)
chmod +x "$PKG/out/node/entry.js"

log "checking that the server starts"
"$PKG/out/node/entry.js" --version >&2

if [[ -f "$MARKER" ]]; then
  log "another install finished first; using $DEST"
else
  rm -rf "$DEST"
  mv "$WORK" "$DEST"
  touch "$MARKER"
  log "installed in $DEST"
fi
echo "$DEST"
