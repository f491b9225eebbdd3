#!/usr/bin/env bash
# Builds the Debian package of the desktop app with dpkg-deb:
#   scripts/package.sh BINARY VERSION OUTDIR
# BINARY is the desktop build (`make build`'s build/bin/clusterspace), VERSION a Debian version
# (0.1.0+abc1234), OUTDIR where clusterspace_<VERSION>_amd64.deb goes. The package holds the
# binary, a launcher entry (checked with desktop-file-validate) and hicolor icons made from
# build/appicon.png. It prints the path of the .deb.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:?usage: scripts/package.sh BINARY VERSION OUTDIR}
version=${2:?usage: scripts/package.sh BINARY VERSION OUTDIR}
outdir=${3:?usage: scripts/package.sh BINARY VERSION OUTDIR}

for tool in dpkg-deb desktop-file-validate convert; do
  command -v "$tool" >/dev/null || { echo "package: '$tool' is missing: run scripts/setup.sh" >&2; exit 1; }
done
# A binary built without the Wails tags opens no window: refuse to package it.
"$bin" --version | grep -q 'desktop,' || { echo "package: $bin was built without the desktop window: use \`make build\`" >&2; exit 1; }

# The icon sizes launchers look up in the hicolor theme.
ICON_SIZES=(16 22 24 32 48 64 128 256 512)

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 0755 "$root" # the package's "./": mktemp made it private
install -D -m 0755 "$bin" "$root/usr/bin/clusterspace"

install -D -m 0644 /dev/stdin "$root/usr/share/applications/clusterspace.desktop" <<'EOF'
[Desktop Entry]
Type=Application
Name=ClusterSpace
GenericName=Agent Workspace
Comment=Terminal and browser panes with an AI agent that works in them
Exec=clusterspace
Icon=clusterspace
Terminal=false
Categories=Development;
Keywords=terminal;ssh;tmux;browser;agent;goal;
StartupNotify=true
StartupWMClass=clusterspace
EOF
desktop-file-validate "$root/usr/share/applications/clusterspace.desktop"

for size in "${ICON_SIZES[@]}"; do
  dir="$root/usr/share/icons/hicolor/${size}x${size}/apps"
  mkdir -p "$dir"
  # 8-bit RGBA: the 16-bit source is more than any launcher reads.
  convert build/appicon.png -resize "${size}x${size}" -depth 8 "PNG32:$dir/clusterspace.png"
done

installed_kb=$(du -sk "$root/usr" | cut -f1)
mkdir -p "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<EOF
Package: clusterspace
Version: $version
Section: devel
Priority: optional
Architecture: amd64
Maintainer: ClusterSpace developers <clusterspace@localhost>
Installed-Size: $installed_kb
Depends: libwebkit2gtk-4.1-0, libgtk-3-0, libc6, bubblewrap, socat
Recommends: chromium, openssh-client, tmux
Description: workspace of terminal and browser panes with an AI agent
 ClusterSpace is a desktop workspace of terminal panes (local shells, SSH with tmux)
 and browser panes, with an AI agent that works in them and a Goal Runner that drives
 the model until a success criterion verifies. Browser panes need Chromium.
EOF

mkdir -p "$outdir"
deb="$outdir/clusterspace_${version}_amd64.deb"
# gzip: xz takes ~50 s on the 55 MB binary here for a package ~25% smaller.
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null
echo "$deb"
