#!/usr/bin/env bash
# Draws build/appicon.png (the window and launcher icon) with ImageMagick: a 2 x 2 pane grid
# on a dark tile, the app's own picture of itself. Run it again after changing the drawing.
set -euo pipefail
cd "$(dirname "$0")/.."
convert -size 512x512 xc:none \
  -fill '#16181d' -draw 'roundrectangle 16,16 496,496 96,96' \
  -fill '#4ea1ff' -draw 'roundrectangle 96,96 244,244 24,24' \
  -fill '#2b3340' -draw 'roundrectangle 268,96 416,244 24,24' \
  -fill '#2b3340' -draw 'roundrectangle 96,268 244,416 24,24' \
  -fill '#3ddc97' -draw 'roundrectangle 268,268 416,416 24,24' \
  build/appicon.png
echo "wrote build/appicon.png"
