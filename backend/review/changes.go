package review

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Limits of a page of changes.
const (
	// MaxFilePatch cuts one file's patch: a generated file or a lockfile of megabytes is not
	// read line by line in a review, and would stall the window that draws it.
	MaxFilePatch = 1 << 20
	// maxPagePatch stops a page's patch from growing once it is this big (a file started is
	// finished, up to MaxFilePatch): the rest comes on the next page.
	maxPagePatch = 4 << 20
	// DefaultLimit is how many files' patches a page holds when the request names no limit;
	// MaxLimit is the most a request may ask for.
	DefaultLimit = 20
	MaxLimit     = 200
)

// File statuses.
const (
	StatusAdded    = "added"
	StatusModified = "modified"
	StatusDeleted  = "deleted"
	StatusRenamed  = "renamed"
)

// ChangesOptions choose the patch a page carries: one file's (File), else the files in
// [Offset, Offset+Limit) of the change's list; FilesOnly, none (the file list alone).
type ChangesOptions struct {
	File      string
	Offset    int
	Limit     int
	FilesOnly bool
}

// FileChange is one file the change touches.
type FileChange struct {
	Path    string `json:"path"`
	OldPath string `json:"oldPath,omitempty"` // where a renamed file was
	Status  string `json:"status"`            // StatusAdded, StatusModified, StatusDeleted or StatusRenamed
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
}

// ChangesPage is a change's file list and a part of its patch.
type ChangesPage struct {
	Ref    string `json:"ref"`
	Kind   string `json:"kind"`
	Branch string `json:"branch"`
	// Base is the commit the diff is from: where the branch started (its merge base with
	// the branch, should the branch have been rebased since).
	Base   string `json:"base"`
	Target string `json:"target,omitempty"`
	// Tip is the commit the diff is to: the branch's tip, or the commit the work ended at
	// when the branch is gone.
	Tip string `json:"tip"`
	// Uncommitted says the worktree holds work not committed yet (the work is still going
	// on); the page shows the branch's commits only, and Note says so.
	Uncommitted bool   `json:"uncommitted,omitempty"`
	Note        string `json:"note,omitempty"`
	// Files is every file of the change, in git's order.
	Files []FileChange `json:"files"`
	// Patch is the unified diff, in git's format, of File or of the page's files.
	Patch string `json:"patch"`
	// Offset is the first file of the page; NextOffset the first of the next (0: no more).
	Offset     int `json:"offset"`
	NextOffset int `json:"nextOffset"`
	// Truncated says a file's patch was cut at MaxFilePatch (TruncatedFiles says which); a
	// line starting "\ " at its end says so in the patch too.
	Truncated      bool     `json:"truncated,omitempty"`
	TruncatedFiles []string `json:"truncatedFiles,omitempty"`
}

// span is the two commits a subject's change is between.
type span struct{ base, tip string }

// spanOf finds the commits of a subject's diff: from the merge base of where it started
// (or of its target) and its branch's tip, to that tip.
func spanOf(ctx context.Context, subj Subject) (span, error) {
	wt := subj.Worktree
	repo := wt.Repo
	if repo == "" {
		return span{}, fmt.Errorf("%s %s has no repository on record, so its branch cannot be read", subj.Kind, subj.Ref)
	}
	if _, err := os.Stat(repo); err != nil {
		return span{}, fmt.Errorf("the repository of %s, %s, is gone (%v): its branch %s cannot be read", subj.Ref, repo, err, wt.Branch)
	}
	tip, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+wt.Branch+"^{commit}")
	if err != nil || len(tip) == 0 {
		if wt.Commit == "" {
			return span{}, fmt.Errorf("branch %s of %s is not in %s and the work recorded no commit: there is nothing to review", wt.Branch, subj.Ref, repo)
		}
		if _, err := git(ctx, repo, "cat-file", "-e", wt.Commit+"^{commit}"); err != nil {
			return span{}, fmt.Errorf("branch %s of %s is not in %s, and the commit its work ended at, %s, is gone too (garbage-collected): there is nothing left to review", wt.Branch, subj.Ref, repo, wt.Commit)
		}
		tip = []byte(wt.Commit)
	}
	from := wt.Base
	if from == "" {
		from = wt.Target
	}
	if from == "" {
		return span{}, fmt.Errorf("%s recorded neither the commit its branch %s started from nor a target branch: diff it yourself with git log %s", subj.Ref, wt.Branch, wt.Branch)
	}
	t := strings.TrimSpace(string(tip))
	mb, err := git(ctx, repo, "merge-base", from, t)
	if err != nil {
		return span{}, fmt.Errorf("branch %s of %s shares no history with %s, where it started: %v", wt.Branch, subj.Ref, from, err)
	}
	return span{base: strings.TrimSpace(string(mb)), tip: t}, nil
}

// Changes reads a subject's change: its files, and the patch of one of them or of a page of
// them. It shows committed work only: the work of a task or goal that is still running is
// committed on its branch when it ends.
func Changes(ctx context.Context, subj Subject, opts ChangesOptions) (ChangesPage, error) {
	if opts.Offset < 0 {
		return ChangesPage{}, &FieldError{"offset", fmt.Sprintf("is %d; give 0 or more", opts.Offset)}
	}
	if opts.Limit < 0 || opts.Limit > MaxLimit {
		return ChangesPage{}, &FieldError{"limit", fmt.Sprintf("is %d; give 1 to %d files (0: %d)", opts.Limit, MaxLimit, DefaultLimit)}
	}
	if opts.Limit == 0 {
		opts.Limit = DefaultLimit
	}
	sp, err := spanOf(ctx, subj)
	if err != nil {
		return ChangesPage{}, err
	}
	wt := subj.Worktree
	page := ChangesPage{Ref: subj.Ref, Kind: subj.Kind, Branch: wt.Branch, Base: sp.base, Target: wt.Target, Tip: sp.tip}
	if subj.Running() {
		page.Uncommitted = worktreeDirty(ctx, wt.Dir, wt.Pruned)
		page.Note = fmt.Sprintf("%s is %s: this is the work committed on %s so far; what its worktree holds besides is committed when it ends", subj.Ref, subj.Status, wt.Branch)
	}
	if page.Files, err = listFiles(ctx, wt.Repo, sp, nil); err != nil {
		return ChangesPage{}, err
	}
	var window []FileChange
	if opts.FilesOnly {
		return page, nil
	}
	if opts.File != "" {
		f, ok := findFile(page.Files, opts.File)
		if !ok {
			return ChangesPage{}, &FieldError{"file", fmt.Sprintf("%q is not a file of %s's change; its files are %s", opts.File, subj.Ref, fileNames(page.Files))}
		}
		window = []FileChange{f}
	} else {
		if opts.Offset > len(page.Files) || (opts.Offset > 0 && opts.Offset == len(page.Files)) {
			return ChangesPage{}, &FieldError{"offset", fmt.Sprintf("is %d, but the change of %s has %d files", opts.Offset, subj.Ref, len(page.Files))}
		}
		page.Offset = opts.Offset
		window = page.Files[opts.Offset:min(opts.Offset+opts.Limit, len(page.Files))]
	}
	if len(window) == 0 {
		return page, nil
	}
	patches, err := patchesOf(ctx, wt.Repo, sp, window)
	if err != nil {
		return ChangesPage{}, err
	}
	var b strings.Builder
	for _, p := range patches {
		b.Write(p.text)
		if p.cut {
			page.Truncated = true
			page.TruncatedFiles = append(page.TruncatedFiles, p.file.Path)
			fmt.Fprintf(&b, "\\ ClusterSpace cut this file's patch at %d bytes of %d: read all of it with git diff %s %s -- %s\n",
				MaxFilePatch, p.size, sp.base, sp.tip, p.file.Path)
		}
	}
	page.Patch = b.String()
	if opts.File == "" {
		if next := page.Offset + len(patches); next < len(page.Files) {
			page.NextOffset = next
		}
	}
	return page, nil
}

// worktreeDirty reports whether a worktree holds changes not committed (best effort: a
// worktree that cannot be read holds none we can show).
func worktreeDirty(ctx context.Context, dir string, pruned bool) bool {
	if dir == "" || pruned {
		return false
	}
	out, err := git(ctx, dir, "status", "--porcelain", "--untracked-files=normal")
	return err == nil && len(bytes.TrimSpace(out)) > 0
}

// findFile finds a file of the change by its path (or, for a renamed one, its old path).
func findFile(files []FileChange, path string) (FileChange, bool) {
	for _, f := range files {
		if f.Path == path {
			return f, true
		}
	}
	for _, f := range files {
		if f.OldPath != "" && f.OldPath == path {
			return f, true
		}
	}
	return FileChange{}, false
}

// fileNames lists a change's paths for a message, the first few.
func fileNames(files []FileChange) string {
	const shown = 10
	if len(files) == 0 {
		return "none (the branch changes nothing)"
	}
	var names []string
	for i, f := range files {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(files)-shown))
			break
		}
		names = append(names, f.Path)
	}
	return strings.Join(names, ", ")
}

// diffArgs are how every diff here is asked of git, whatever the person's git config says:
// renames found, no colour, no external or text-converting drivers, a/ and b/ prefixes.
func diffArgs(extra ...string) []string {
	return append([]string{"-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff", "--no-textconv",
		"--find-renames", "--src-prefix=a/", "--dst-prefix=b/"}, extra...)
}

// pathspecs limits a diff to files, read literally (no glob magic in a file's name).
func pathspecs(files []FileChange) []string {
	out := []string{"--"}
	for _, f := range files {
		out = append(out, ":(literal)"+f.Path)
		if f.OldPath != "" {
			out = append(out, ":(literal)"+f.OldPath)
		}
	}
	return out
}

// listFiles lists the files the span changes (those of only when given), with their counts.
func listFiles(ctx context.Context, repo string, sp span, only []FileChange) ([]FileChange, error) {
	var limit []string
	if only != nil {
		limit = pathspecs(only)
	}
	status, err := git(ctx, repo, append(diffArgs("--name-status", "-z", sp.base, sp.tip), limit...)...)
	if err != nil {
		return nil, err
	}
	counts, err := git(ctx, repo, append(diffArgs("--numstat", "-z", sp.base, sp.tip), limit...)...)
	if err != nil {
		return nil, err
	}
	files, err := parseNameStatus(status)
	if err != nil {
		return nil, err
	}
	if err := addNumstat(files, counts); err != nil {
		return nil, err
	}
	return files, nil
}

// parseNameStatus reads `git diff --name-status -z`: a status letter (R with a score), then
// the path, or the old and the new path of a rename or copy.
func parseNameStatus(out []byte) ([]FileChange, error) {
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(out) == 0 {
		return []FileChange{}, nil
	}
	files := []FileChange{}
	for i := 0; i < len(fields); {
		code := fields[i]
		if code == "" || i+1 >= len(fields) {
			return nil, fmt.Errorf("git diff --name-status gave %q, which this version cannot read", out)
		}
		f := FileChange{Path: fields[i+1]}
		i += 2
		switch code[0] {
		case 'A':
			f.Status = StatusAdded
		case 'D':
			f.Status = StatusDeleted
		case 'R', 'C':
			if i >= len(fields) {
				return nil, fmt.Errorf("git diff --name-status gave a rename without its new path: %q", out)
			}
			f.OldPath, f.Path, f.Status = f.Path, fields[i], StatusRenamed
			i++
			if code[0] == 'C' {
				f.OldPath, f.Status = "", StatusAdded // a copy: the old file stays as it was
			}
		default: // M, T (a type change), U, X
			f.Status = StatusModified
		}
		files = append(files, f)
	}
	return files, nil
}

// addNumstat sets the counts of `git diff --numstat -z`, whose records come in the same
// order as --name-status's: "ADDED\tREMOVED\tPATH", or with an empty path followed by the
// old and the new path of a rename; "-" counts for a binary file.
func addNumstat(files []FileChange, out []byte) error {
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	n := 0
	for i := 0; i < len(fields) && len(out) > 0; n++ {
		parts := strings.SplitN(fields[i], "\t", 3)
		if len(parts) != 3 || n >= len(files) {
			return fmt.Errorf("git diff --numstat gave %q, which does not match its --name-status", out)
		}
		i++
		path := parts[2]
		if path == "" {
			if i+1 >= len(fields) {
				return fmt.Errorf("git diff --numstat gave a rename without its paths: %q", out)
			}
			path = fields[i+1]
			i += 2
		}
		f := &files[n]
		if path != f.Path {
			return fmt.Errorf("git diff --numstat listed %q where --name-status listed %q", path, f.Path)
		}
		if parts[0] == "-" && parts[1] == "-" {
			f.Binary = true
			continue
		}
		f.Added, _ = strconv.Atoi(parts[0])
		f.Removed, _ = strconv.Atoi(parts[1])
	}
	if n != len(files) {
		return fmt.Errorf("git diff --numstat listed %d files, --name-status %d", n, len(files))
	}
	return nil
}

// filePatch is one file's part of a patch.
type filePatch struct {
	file FileChange
	text []byte
	size int64 // its whole size, more than len(text) when cut
	cut  bool
}

// patchesOf reads the patches of window's files, in order, each cut at MaxFilePatch; it stops
// once they hold maxPagePatch bytes, so it may return fewer than asked (at least one).
func patchesOf(ctx context.Context, repo string, sp span, window []FileChange) ([]filePatch, error) {
	// git lists the files a pathspec matches, which may be more than the window (a pathspec
	// "a" matches "a/b" too): each part is matched to git's own list of them, in the same order.
	listed, err := listFiles(ctx, repo, sp, window)
	if err != nil {
		return nil, err
	}
	type key struct{ path, old string }
	want := map[key]bool{}
	for _, f := range window {
		want[key{f.Path, f.OldPath}] = true
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", repo}, append(diffArgs(sp.base, sp.tip), pathspecs(window)...)...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git diff could not start: %v", err)
	}
	var out []filePatch
	total := 0
	n := -1 // which of listed the part being read is
	stopped := false
	err = splitPatch(stdout, MaxFilePatch, func(p filePatch) bool {
		n++
		if n >= len(listed) {
			stopped = true
			return false
		}
		if !want[key{listed[n].Path, listed[n].OldPath}] {
			return true
		}
		p.file = listed[n]
		out = append(out, p)
		total += len(p.text)
		if total >= maxPagePatch && len(out) < len(window) {
			stopped = true
			return false
		}
		return true
	})
	if stopped || err != nil {
		cancel() // the rest is not wanted; git ends on the closed pipe or the kill
		io.Copy(io.Discard, stdout)
	}
	werr := cmd.Wait()
	if err != nil {
		return nil, err
	}
	if n+1 > len(listed) {
		return nil, fmt.Errorf("git diff %s %s printed more files than it listed for %s", sp.base, sp.tip, fileNames(window))
	}
	if werr != nil && !stopped {
		return nil, fmt.Errorf("git diff %s %s: %v: %s", sp.base, sp.tip, werr, strings.TrimSpace(stderr.String()))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("git diff %s %s printed no patch for %s", sp.base, sp.tip, fileNames(window))
	}
	return out, nil
}

// splitPatch reads a patch and hands each file's part (from its "diff --git" line) to part,
// which returns false to stop reading. A part keeps whole lines up to limit bytes; past them
// it is cut, its size still counted.
func splitPatch(r io.Reader, limit int, part func(filePatch) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var cur *filePatch
	var line []byte // the line being read, while it still fits
	lineSize := 0
	atStart := true
	flush := func() bool {
		if cur == nil {
			return true
		}
		p := *cur
		cur = nil
		return part(p)
	}
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 {
			if atStart && bytes.HasPrefix(frag, []byte("diff --git ")) {
				if !flush() {
					return nil
				}
				cur = &filePatch{}
			}
			if atStart {
				line, lineSize = line[:0], 0
			}
			if cur != nil {
				lineSize += len(frag)
				cur.size += int64(len(frag))
				if !cur.cut && len(cur.text)+lineSize <= limit {
					line = append(line, frag...)
				} else {
					cur.cut = true
				}
			}
			atStart = frag[len(frag)-1] == '\n'
			if atStart && cur != nil && !cur.cut {
				cur.text = append(cur.text, line...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			if !atStart && cur != nil && !cur.cut {
				cur.text = append(cur.text, line...) // a last line without its newline
			}
			flush()
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading git diff: %v", err)
		}
	}
}

// git runs git in dir and returns what it printed on stdout; an error carries its stderr.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
