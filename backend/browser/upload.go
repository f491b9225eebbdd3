package browser

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// UploadsDir holds the private copies of the files chosen in file inputs (see SetFiles).
func (m *Manager) UploadsDir() string { return filepath.Join(m.opts.DataDir, "uploads") }

// SetFiles puts files into a file input (as a person choosing them in the file dialog would).
// Chromium reads a chosen file by its path, and later (when the form is sent), so it is never
// handed the caller's path, which a link swapped in since could send elsewhere: each open file
// is copied, from the descriptor the caller opened, into a folder of the app's own that the
// page's tab keeps until its next choice or until it closes.
func (m *Manager) SetFiles(ctx context.Context, paneID, selector string, files []*os.File) (Element, error) {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name()
	}
	t, err := m.agentTab(paneID, "set_files", selector+" = "+strings.Join(names, ", "))
	if err != nil {
		return Element{}, err
	}
	var d struct {
		Error string `json:"error"`
		Element
	}
	expr := "(() => { const f = cs.find(" + jsArg(map[string]string{"selector": selector}) + "); if (!f.el) return {error: f.error}; " +
		"if (f.el.tagName !== 'INPUT' || f.el.type !== 'file') return {error: 'the element is not a file input (<input type=file>)'}; cs.target = f.el; return cs.describe(f.el); })()"
	if err := t.eval(ctx, expr, &d); err != nil {
		return Element{}, err
	}
	if d.Error != "" {
		return Element{}, &PageError{Msg: d.Error}
	}
	dir, paths, err := m.stageUploads(files)
	if err != nil {
		return Element{}, err
	}
	err = t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		obj, exc, err := runtime.Evaluate("window.__clusterspace.target").Do(ctx)
		if err != nil {
			return err
		}
		if exc != nil || obj.ObjectID == "" {
			return pageErrorf("the file input went away")
		}
		defer runtime.ReleaseObject(obj.ObjectID).Do(ctx) // Best effort: freed with the page anyway.
		return dom.SetFileInputFiles(paths).WithObjectID(obj.ObjectID).Do(ctx)
	}))
	if err != nil {
		os.RemoveAll(dir) // Best effort: nothing holds the copies.
		return Element{}, err
	}
	t.keepUploads(dir)
	return d.Element, nil
}

// stageUploads copies each file into a folder of its own (two chosen files may share a
// name) under a new folder of UploadsDir, keeping its name, which the page sees.
func (m *Manager) stageUploads(files []*os.File) (string, []string, error) {
	if err := os.MkdirAll(m.UploadsDir(), 0o700); err != nil {
		return "", nil, fmt.Errorf("the uploads folder %s cannot be created: %w", m.UploadsDir(), err)
	}
	var id [8]byte
	rand.Read(id[:])
	dir := filepath.Join(m.UploadsDir(), hex.EncodeToString(id[:]))
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(dir, fmt.Sprint(i), filepath.Base(f.Name()))
		if err := copyUpload(f, paths[i]); err != nil {
			os.RemoveAll(dir) // Best effort: a partial copy is never handed to the page.
			return "", nil, err
		}
	}
	return dir, paths, nil
}

func copyUpload(from *os.File, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return fmt.Errorf("stage %s for upload: %w", from.Name(), err)
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("stage %s for upload: %w", from.Name(), err)
	}
	if _, err := io.Copy(out, from); err != nil {
		out.Close()
		return fmt.Errorf("read %s: %w", from.Name(), err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("stage %s for upload: %w", from.Name(), err)
	}
	return nil
}

// keepUploads makes dir the copies the tab's page holds, removing the ones it held before:
// a page keeps only its latest choice (choosing again replaces the files of an input). A tab
// that closed meanwhile keeps none.
func (t *tab) keepUploads(dir string) {
	t.mu.Lock()
	drop := []string{t.uploads}
	t.uploads = dir
	if t.closing {
		drop, t.uploads = append(drop, dir), ""
	}
	t.mu.Unlock()
	for _, d := range drop {
		if d != "" {
			os.RemoveAll(d) // Best effort: a leftover is removed at Shutdown.
		}
	}
}

// dropUploads removes the copies the tab's page held: it is closing.
func (t *tab) dropUploads() {
	t.keepUploads("")
}
