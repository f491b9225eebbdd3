#!/usr/bin/env bash
# Installs the real agent CLIs the end-to-end tests drive (Claude Code and Codex CLI) from npm,
# at pinned versions, into a cache (build/agents, or $CLUSTERSPACE_AGENTS_DIR): one prefix per
# name@version, reused while it is complete. `make test` runs it; the tests run it too (it only
# checks once installed), so they never run without the CLIs. Prints the cache dir on its last line. A version npm does not serve (withdrawn,
# or no network) fails here with the version named, so the tests cannot pass without the CLIs.
set -euo pipefail

# The pinned versions: change them here (and only here) to test another release.
AGENTS=("@anthropic-ai/claude-code@2.1.197:claude" "@openai/codex@0.171.0:codex")

cd "$(dirname "$0")/.."
cache=${CLUSTERSPACE_AGENTS_DIR:-$PWD/build/agents}
export NPM_CONFIG_UPDATE_NOTIFIER=false
mkdir -p "$cache"
command -v npm >/dev/null 2>&1 || { echo "agents: npm is not on PATH; install Node >= 20 (scripts/setup.sh checks it)" >&2; exit 1; }

for entry in "${AGENTS[@]}"; do
  pkg=${entry%:*}
  bin=${entry##*:}
  dir="$cache/${pkg//\//+}"
  # The stamp is written last, so an install cut off half way is done again.
  if [ -x "$dir/node_modules/.bin/$bin" ] && [ -f "$dir/.installed" ]; then
    continue
  fi
  name=${pkg%@*}
  version=${pkg##*@}
  if ! served=$(npm view "$pkg" version --loglevel=error 2>&1) || [ "$served" != "$version" ]; then
    echo "agents: npm does not serve $name at version $version (npm view said: ${served:-nothing, so that version does not exist})." >&2
    echo "agents: pick a served version (npm view $name versions --json) and pin it in scripts/agents.sh." >&2
    exit 1
  fi
  echo "agents: installing $pkg into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg" >&2
  [ -x "$dir/node_modules/.bin/$bin" ] || { echo "agents: $pkg installed no $bin in $dir/node_modules/.bin" >&2; exit 1; }
  date -u +%FT%TZ > "$dir/.installed"
done
echo "$cache"
