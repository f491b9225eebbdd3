package browser

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/clusterspace/clusterspace/backend/fsroot"
)

// The picture a model gets of a page: small enough to be cheap in its context, sharp
// enough to read ordinary text.
const (
	ThumbnailWidth   = 1024
	ThumbnailQuality = 70
	// maxFullPageHeight bounds a full-page capture: an endless feed would otherwise make a
	// picture no model or disk wants.
	maxFullPageHeight = 16384
	// maxAnnotations bounds the numbered boxes of an annotated screenshot.
	maxAnnotations = 150
)

func cdpTime(t time.Time) cdp.TimeSinceEpoch { return cdp.TimeSinceEpoch(t) }

// Screenshot captures the active tab as PNG: the viewport, or the whole page.
func (m *Manager) Screenshot(ctx context.Context, paneID string, fullPage bool) ([]byte, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return nil, err
	}
	return t.screenshot(ctx, fullPage)
}

func (t *tab) screenshot(ctx context.Context, fullPage bool) ([]byte, error) {
	var buf []byte
	err := t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		p := page.CaptureScreenshot().WithFormat(page.CaptureScreenshotFormatPng).WithFromSurface(true)
		if fullPage {
			_, _, _, _, _, content, err := page.GetLayoutMetrics().Do(ctx)
			if err != nil {
				return err
			}
			h := math.Min(math.Ceil(content.Height), maxFullPageHeight)
			p = p.WithCaptureBeyondViewport(true).WithClip(&page.Viewport{X: 0, Y: 0, Width: math.Ceil(content.Width), Height: h, Scale: 1})
		}
		var err error
		buf, err = p.Do(ctx)
		return err
	}))
	return buf, err
}

// Shot is a screenshot saved to disk.
type Shot struct {
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	PNG    []byte `json:"-"`
	// Thumbnail is a JPEG at most ThumbnailWidth wide, for a model's context.
	Thumbnail []byte `json:"-"`
}

// SaveScreenshot captures the active tab and saves the PNG under ScreenshotsDir.
func (m *Manager) SaveScreenshot(ctx context.Context, paneID string, fullPage bool) (Shot, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return Shot{}, err
	}
	buf, err := t.screenshot(ctx, fullPage)
	if err != nil {
		return Shot{}, err
	}
	kind := "viewport"
	if fullPage {
		kind = "full"
	}
	return m.saveShot(paneID, kind, buf)
}

func (m *Manager) saveShot(paneID, kind string, buf []byte) (Shot, error) {
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		return Shot{}, fmt.Errorf("the screenshot is not a PNG: %w", err)
	}
	thumb, err := encodeThumbnail(img, ThumbnailWidth, ThumbnailQuality)
	if err != nil {
		return Shot{}, err
	}
	dir := m.ScreenshotsDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Shot{}, fmt.Errorf("screenshots dir %q cannot be created: %w", dir, err)
	}
	name := fmt.Sprintf("%s-%s-%s.png", safeName(paneID), time.Now().Format("20060102-150405.000"), kind)
	path := filepath.Join(dir, name)
	if err := writeCapture(path, buf); err != nil {
		return Shot{}, fmt.Errorf("save screenshot: %w", err)
	}
	b := img.Bounds()
	return Shot{Path: path, Bytes: len(buf), Width: b.Dx(), Height: b.Dy(), PNG: buf, Thumbnail: thumb}, nil
}

// Thumbnail returns the pane's active tab as a JPEG at most ThumbnailWidth wide, quality
// ThumbnailQuality: the picture attached to a model's context after a browser action.
func (m *Manager) Thumbnail(ctx context.Context, paneID string) ([]byte, error) {
	buf, err := m.Screenshot(ctx, paneID, false)
	if err != nil {
		return nil, err
	}
	return Thumbnail(buf, ThumbnailWidth, ThumbnailQuality)
}

// Thumbnail scales a PNG or JPEG down to at most maxWidth pixels wide (never up) and
// encodes it as JPEG.
func Thumbnail(pic []byte, maxWidth, quality int) ([]byte, error) {
	img, _, err := image.Decode(bytes.NewReader(pic))
	if err != nil {
		return nil, fmt.Errorf("the picture cannot be read: %w", err)
	}
	return encodeThumbnail(img, maxWidth, quality)
}

func encodeThumbnail(img image.Image, maxWidth, quality int) ([]byte, error) {
	var out bytes.Buffer
	if err := jpeg.Encode(&out, downscale(img, maxWidth), &jpeg.Options{Quality: quality}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// downscale shrinks img to maxWidth by averaging the source pixels under each output pixel
// (a box filter: exact for the shrink factors screenshots need, and no dependency).
func downscale(img image.Image, maxWidth int) image.Image {
	b := img.Bounds()
	if b.Dx() <= maxWidth || maxWidth <= 0 {
		return img
	}
	src, ok := img.(*image.RGBA)
	if !ok {
		src = image.NewRGBA(b)
		draw.Draw(src, b, img, b.Min, draw.Src)
	}
	w := maxWidth
	h := max(1, int(math.Round(float64(b.Dy())*float64(w)/float64(b.Dx()))))
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	sx, sy := float64(b.Dx())/float64(w), float64(b.Dy())/float64(h)
	for y := range h {
		y0, y1 := int(float64(y)*sy), max(int(float64(y+1)*sy), int(float64(y)*sy)+1)
		for x := range w {
			x0, x1 := int(float64(x)*sx), max(int(float64(x+1)*sx), int(float64(x)*sx)+1)
			var r, g, bl, a, n uint32
			for yy := y0; yy < min(y1, b.Dy()); yy++ {
				row := src.Pix[(yy)*src.Stride:]
				for xx := x0; xx < min(x1, b.Dx()); xx++ {
					p := row[xx*4 : xx*4+4]
					r, g, bl, a, n = r+uint32(p[0]), g+uint32(p[1]), bl+uint32(p[2]), a+uint32(p[3]), n+1
				}
			}
			if n == 0 {
				continue
			}
			o := dst.Pix[y*dst.Stride+x*4:]
			o[0], o[1], o[2], o[3] = uint8(r/n), uint8(g/n), uint8(bl/n), uint8(a/n)
		}
	}
	return dst
}

// Annotate numbers the visible interactive elements of the active tab with boxes, captures
// the viewport with the boxes drawn, removes them, and saves the picture. ClickIndex then
// clicks by those numbers until the page navigates.
func (m *Manager) Annotate(ctx context.Context, paneID string) (Shot, []Element, error) {
	t, err := m.agentTab(paneID, "annotate", "")
	if err != nil {
		return Shot{}, nil, err
	}
	var els []Element
	if err := t.eval(ctx, fmt.Sprintf("cs.annotate(%d)", maxAnnotations), &els); err != nil {
		return Shot{}, nil, err
	}
	buf, err := t.screenshot(ctx, false)
	t.eval(ctx, "cs.clearMarks()", nil) // Best effort: the overlay ignores the pointer anyway.
	if err != nil {
		return Shot{}, nil, err
	}
	shot, err := m.saveShot(paneID, "annotated", buf)
	return shot, els, err
}

// PDF prints the active tab to a PDF. dest is where the caller saves it, for the action log;
// the caller writes the file, opening it where the policy judged it (see tools' browser_files.go).
func (m *Manager) PDF(ctx context.Context, paneID, dest string) ([]byte, error) {
	t, err := m.agentTab(paneID, "save_pdf", dest)
	if err != nil {
		return nil, err
	}
	var buf []byte
	err = t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		buf, _, err = page.PrintToPDF().WithPrintBackground(true).Do(ctx)
		return err
	}))
	return buf, err
}

// HTML is the active tab's current DOM as HTML, doctype first. dest is where the caller
// saves it, for the action log.
func (m *Manager) HTML(ctx context.Context, paneID, dest string) ([]byte, error) {
	t, err := m.agentTab(paneID, "save_html", dest)
	if err != nil {
		return nil, err
	}
	var html string
	err = t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		res, exc, err := runtime.Evaluate(`(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + "\n" : "") + document.documentElement.outerHTML`).
			WithReturnByValue(true).Do(ctx)
		if err != nil {
			return err
		}
		if exc != nil {
			return fmt.Errorf("read the page's HTML: %s", exceptionText(exc))
		}
		return jsonString(res.Value, &html)
	}))
	if err != nil {
		return nil, err
	}
	return []byte(html), nil
}

// CapturePath is a new file name under ScreenshotsDir for a capture of the pane with the
// extension ext ("pdf", "html"): where a save the model gave no path for goes.
func (m *Manager) CapturePath(paneID, ext string) string {
	return filepath.Join(m.ScreenshotsDir(), fmt.Sprintf("%s-%s.%s", safeName(paneID), time.Now().Format("20060102-150405.000"), ext))
}

// writeCapture writes a capture into the app's own screenshots folder, never through a link
// planted at its name.
func writeCapture(path string, data []byte) error {
	f, err := fsroot.Create("", path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
