#!/usr/bin/env bash
# Installs everything ClusterSpace needs to build, run and test on Debian/Ubuntu:
# system packages (apt), then the frontend's npm packages. Safe to run again: each
# step checks first and does nothing when its work is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

# What the build, the desktop window, the browser panes and the tests need.
# libgtk/libwebkit2gtk: the Wails desktop window; chromium: browser panes and e2e tests;
# xvfb/xauth/imagemagick/xdotool: the desktop smoke test; fonts: readable screenshots;
# dbus: the session bus the desktop notifications' and keyring tests run on;
# openssh-server/openssh-client/tmux: the SSH pane tests log in to a real sshd and attach tmux;
# gnome-keyring/libsecret-tools: the secrets tests' real Secret Service (and secret-tool to check it);
# dunst: the notifications tests' real notification daemon;
# desktop-file-utils: `make package` validates the .desktop entry;
# bubblewrap/socat: a confined goal's namespaces and the relay to its egress proxy; curl: the
# sandbox tests fetch through that proxy as a goal's shell would.
APT_PACKAGES=(build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev
  xvfb xauth chromium imagemagick xdotool fonts-dejavu-core ca-certificates dbus
  openssh-server openssh-client tmux gnome-keyring libsecret-tools dunst desktop-file-utils
  bubblewrap socat curl)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing system packages: ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo)
  elif command -v sudo >/dev/null 2>&1; then
    echo "setup: sudo will ask for your password to install: ${missing[*]}"
    SUDO=(sudo)
  else
    echo "setup: these system packages are missing: ${missing[*]}" >&2
    echo "setup: run this script as root, or install sudo, or install them yourself with:" >&2
    echo "  apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: apt-get not found; this script supports Debian and Ubuntu. Install: ${missing[*]}" >&2
    exit 1
  fi
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

for tool in go node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "setup: '$tool' is not on PATH; install Go >= 1.24 and Node >= 20" >&2; exit 1; }
done

# npm ci only when the lock file changed since the last install (a stamp records its hash).
lock_hash=$(sha256sum frontend/package-lock.json | cut -d' ' -f1)
stamp=frontend/node_modules/.clusterspace-lock-hash
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_hash" ]; then
  echo "setup: installing frontend packages (npm ci)"
  (cd frontend && npm ci --no-audit --no-fund --loglevel=error)
  echo "$lock_hash" > "$stamp"
fi
echo "setup: ok"
