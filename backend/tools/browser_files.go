package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/clusterspace/clusterspace/backend/fsroot"
)

// The browser tools that write or read a file on the model's behalf. Each forms the file's
// final name first (extension included), reports exactly that name to the sandbox check, and
// opens it through fsroot: beneath the call's dir, never following a link out of it, so a
// link planted (or swapped in after the check) by the goal's own shell cannot send the write
// or the read elsewhere.

// pathTool reports the files a call touches, for the sandbox check.
type pathTool struct {
	Tool
	paths func(args json.RawMessage) ([]string, error)
}

func (p pathTool) Paths(args json.RawMessage) ([]string, error) { return p.paths(args) }

// uploadTool is browser_set_files: choosing files hands them to the page, so it asks first.
type uploadTool struct{ pathTool }

func (uploadTool) Confirm(_ context.Context, args json.RawMessage) string {
	var p setFilesParams
	if json.Unmarshal(args, &p) != nil || len(p.Paths) == 0 {
		return ""
	}
	return "uploading files from this computer to the page: " + strings.Join(p.Paths, ", ")
}

// savedName is the file a save writes, as the model named it: cleaned, with the extension
// added when it lacks it; "" when it named none (a new file in the app's data dir). What the
// policy judges and what is opened are this one name.
func savedName(given, ext string) string {
	if given == "" {
		return ""
	}
	name := filepath.Clean(given)
	if !strings.HasSuffix(strings.ToLower(name), "."+ext) {
		name += "." + ext
	}
	return name
}

// uploadNames are the files a set_files call reads, as the policy judges them.
func uploadNames(args json.RawMessage) ([]string, error) {
	var p setFilesParams
	if err := json.Unmarshal(args, &p); err != nil {
		return nil, err
	}
	names := make([]string, len(p.Paths))
	for i, given := range p.Paths {
		names[i] = filepath.Clean(given)
	}
	return names, nil
}

func registerBrowserFiles(r *Registry, b BrowserDriver) {
	save := func(name, desc, what, ext string, render func(ctx context.Context, paneID, dest string) ([]byte, error)) Tool {
		return pathTool{New(name, desc, WriteLocal, func(ctx context.Context, c Call, p saveParams) (Result, error) {
			return saveRendered(ctx, b, c, p, what, ext, render)
		}), func(args json.RawMessage) ([]string, error) {
			var p saveParams
			if err := json.Unmarshal(args, &p); err != nil {
				return nil, err
			}
			if n := savedName(p.Path, ext); n != "" {
				return []string{n}, nil
			}
			return nil, nil // the app's own data dir
		}}
	}
	r.Register(
		uploadTool{pathTool{New("browser_set_files", "Choose files in an <input type=file>, as a person picking them in the file dialog.", NetworkWrite,
			func(ctx context.Context, c Call, p setFilesParams) (Result, error) {
				return chooseFiles(ctx, b, c, p)
			}), uploadNames}},
		save("browser_save_pdf", "Print the page to a PDF file.", "the page as PDF", "pdf", b.PDF),
		save("browser_save_html", "Save the page's current HTML (the live DOM) to a file.", "the page's HTML", "html", b.HTML),
	)
}

// saveRendered renders the page, then writes it where the model said (beneath the call's
// dir), or to a new file in the app's data dir.
func saveRendered(ctx context.Context, b BrowserDriver, c Call, p saveParams, what, ext string,
	render func(ctx context.Context, paneID, dest string) ([]byte, error)) (Result, error) {
	dest, dir := "", c.Dir
	if name := savedName(p.Path, ext); name != "" {
		var err error
		if dest, err = c.Path(name); err != nil {
			return Errorf("path: %v.", err), nil
		}
	} else {
		// The app's own folder: not the model's to choose, so not opened beneath its dir.
		dest, dir = b.CapturePath(p.PaneID, ext), ""
	}
	data, err := render(ctx, p.PaneID, dest)
	if err != nil {
		return browserError(err)
	}
	f, err := fsroot.Create(dir, dest)
	if err == nil {
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	switch {
	case err != nil && p.Path == "":
		return Result{}, fmt.Errorf("save %s to %s: %w", what, dest, err)
	case err != nil:
		return Errorf("path: %s. Nothing was saved.", fileProblem(dest, err)), nil
	}
	return Result{Text: fmt.Sprintf("Saved %s to %s (%d bytes).", what, dest, len(data))}, nil
}

// chooseFiles opens each file the model named (beneath the call's dir) and hands the open
// files to the browser, which gives the page copies: Chromium never opens the model's path.
func chooseFiles(ctx context.Context, b BrowserDriver, c Call, p setFilesParams) (Result, error) {
	if len(p.Paths) == 0 {
		return Errorf("paths is empty: give the paths of the files to choose."), nil
	}
	files := make([]*os.File, 0, len(p.Paths))
	defer func() {
		for _, f := range files {
			f.Close() // Best effort: read-only, and the browser copied what it needs.
		}
	}()
	for _, given := range p.Paths {
		if given == "" {
			return Errorf("paths holds an empty path: give the path of each file."), nil
		}
		path, err := c.Path(filepath.Clean(given))
		if err != nil {
			return Errorf("paths: %v.", err), nil
		}
		f, err := fsroot.Open(c.Dir, path)
		if err != nil {
			return Errorf("paths: %s. No file was chosen.", fileProblem(path, err)), nil
		}
		files = append(files, f)
	}
	el, err := b.SetFiles(ctx, p.PaneID, p.Selector, files)
	if err != nil {
		return browserError(err)
	}
	return Result{Text: fmt.Sprintf("Chose %d file(s) in %s.", len(files), el)}, nil
}

// fileProblem says what is wrong with a file the model named, and what to do. fsroot's own
// refusals (a path that escapes the sandbox, a link) say it already.
func fileProblem(path string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%q is not a file that exists, or its folder does not: check the path", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%q cannot be opened: permission denied; use a file you may read and a folder you may write", path)
	}
	return err.Error()
}
