#!/usr/bin/env bash
# Install the agent CLIs the e2e tests run (pinned in package.json next to this script) into
#   ${MAESTRO_E2E_CACHE:-$HOME/.cache/maestro-e2e}/<first 16 hex of sha256(package.json)>/
# and print that folder. A folder that is already complete is reused (a second run costs
# nothing); it appears whole (built aside, then renamed), and concurrent runs take turns on a
# lock file next to it. npm errors are not swallowed: the script fails, and .ci/run with it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pins="$here/package.json"
hash="$(sha256sum "$pins" | cut -c1-16)"
cache="${MAESTRO_E2E_CACHE:-$HOME/.cache/maestro-e2e}"
dest="$cache/$hash"

check() {  # every CLI answers --version, in a throwaway HOME so nothing real is touched
  local dir="$1" tmp_home rc=0
  tmp_home="$(mktemp -d)"
  for cli in claude codex gemini; do
    if ! HOME="$tmp_home" GEMINI_CLI_NO_RELAUNCH=true "$dir/node_modules/.bin/$cli" --version \
        >/dev/null 2>"$tmp_home/err"; then
      echo "install_clis: $cli --version failed in $dir:" >&2
      cat "$tmp_home/err" >&2
      rc=1
    fi
  done
  rm -rf "$tmp_home"
  return "$rc"
}

if [ -f "$dest/.complete" ]; then
  echo "$dest"
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "install_clis: npm is not installed" >&2; exit 1; }
mkdir -p "$cache"
# Two runs at once (two clones' CI on one machine) take turns: the second waits for the lock,
# then finds the first one's complete folder and reuses it, instead of removing the folder
# the first one's tests are already running from.
exec 9>"$cache/.install-$hash.lock"
flock 9
if [ -f "$dest/.complete" ]; then
  echo "$dest"
  exit 0
fi
work="$(mktemp -d "$cache/.install-$hash.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$pins" "$work/package.json"
# --foreground-scripts: the CLIs' postinstall steps (Claude Code links its native binary) run
# and report here; --no-audit/--no-fund: no calls beyond the registry.
npm install --prefix "$work" --no-audit --no-fund --no-save --foreground-scripts >&2
check "$work"
touch "$work/.complete"
rm -rf "$dest"
mv "$work" "$dest"
trap - EXIT
echo "$dest"
