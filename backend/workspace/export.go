package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// The export file names its format and version, so an import can tell a ClusterSpace
// workspace from any other JSON and refuse files from a newer version it cannot read.
const (
	ExportFormat  = "clusterspace.workspace"
	ExportVersion = 1
)

// MaxImportBytes bounds an import file; a real workspace export is a few kilobytes.
const MaxImportBytes = 1 << 20

// exportFile is the JSON written by Export and read by Import.
type exportFile struct {
	Format     string         `json:"format"`
	Version    int            `json:"version"`
	ExportedAt time.Time      `json:"exportedAt"`
	Workspace  exportedLayout `json:"workspace"`
}

type exportedLayout struct {
	Name       string    `json:"name"`
	Rows       int       `json:"rows"`
	Cols       int       `json:"cols"`
	RowWeights []float64 `json:"rowWeights"`
	ColWeights []float64 `json:"colWeights"`
	Panes      []Pane    `json:"panes"`
}

// Export returns a workspace as an indented JSON document and a file name for it.
func (s *Service) Export(ctx context.Context, id string) ([]byte, string, error) {
	ws, _, err := s.lookup(ctx, id)
	if err != nil {
		return nil, "", err
	}
	doc := exportFile{Format: ExportFormat, Version: ExportVersion, ExportedAt: s.now(),
		Workspace: exportedLayout{Name: ws.Name, Rows: ws.Rows, Cols: ws.Cols, RowWeights: ws.RowWeights,
			ColWeights: ws.ColWeights, Panes: ws.Panes}}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, "", err
	}
	return append(b, '\n'), fileName(ws.Name), nil
}

// fileName turns a workspace name into a safe file name.
func fileName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ' || r == '.':
			b.WriteByte('-')
		}
	}
	base := strings.Trim(b.String(), "-")
	if base == "" {
		base = "workspace"
	}
	return base + ".clusterspace.json"
}

// Import reads an exported workspace and adds it as a new, active workspace with fresh ids.
// A file that is not a valid export is refused with a message saying what is wrong, and
// nothing is changed.
func (s *Service) Import(ctx context.Context, data []byte) (Workspace, error) {
	ws, err := parseExport(data)
	if err != nil {
		return Workspace{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.repo.ListWorkspaces(ctx)
	if err != nil {
		return Workspace{}, err
	}
	now := s.now()
	ws.ID, ws.Position, ws.CreatedAt, ws.UpdatedAt = NewWorkspaceID(), nextPosition(all), now, now
	// Fresh pane ids: importing the same file twice must not make two panes share an id.
	for i := range ws.Panes {
		ws.Panes[i].ID = NewPaneID()
	}
	ws.Panes = sortPanes(ws.Panes)
	return s.addActive(ctx, ws, EventImported)
}

// ImportError says why a file cannot be imported.
type ImportError struct{ Reason string }

func (e *ImportError) Error() string { return "cannot import this file: " + e.Reason }

func importErr(format string, args ...any) error {
	return &ImportError{Reason: fmt.Sprintf(format, args...)}
}

// parseExport reads an export's workspace, checked, without the ids, position and times
// an imported one gets.
func parseExport(data []byte) (Workspace, error) {
	if len(data) > MaxImportBytes {
		return Workspace{}, importErr("it is %d bytes; a workspace export is at most %d", len(data), MaxImportBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Workspace{}, importErr("it is empty; choose a file made by Export Workspace")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc exportFile
	if err := dec.Decode(&doc); err != nil {
		return Workspace{}, importErr("it is not a valid workspace export (%s); choose a file made by Export Workspace", describeJSONError(data, err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Workspace{}, importErr("it has more content after the workspace document; choose a file made by Export Workspace")
	}
	if doc.Format != ExportFormat {
		return Workspace{}, importErr("its \"format\" is %q, not %q; choose a file made by Export Workspace", doc.Format, ExportFormat)
	}
	if doc.Version < 1 || doc.Version > ExportVersion {
		return Workspace{}, importErr("it is export version %d; this ClusterSpace reads version %d: update ClusterSpace", doc.Version, ExportVersion)
	}
	l := doc.Workspace
	ws := Workspace{Name: l.Name, Rows: l.Rows, Cols: l.Cols, RowWeights: l.RowWeights, ColWeights: l.ColWeights, Panes: l.Panes}
	if err := Validate(ws); err != nil {
		return Workspace{}, importErr("workspace.%v", err)
	}
	return ws, nil
}

// describeJSONError turns a decoding error into words with a line number a person can find.
func describeJSONError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("broken JSON at line %d: %s", lineOf(data, syn.Offset), syn.Error())
	case errors.As(err, &typ):
		return fmt.Sprintf("field %q should be %s, found %s at line %d", typ.Field, typ.Type, typ.Value, lineOf(data, typ.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends too early"
	default:
		return err.Error()
	}
}

func lineOf(data []byte, offset int64) int {
	offset = min(offset, int64(len(data)))
	return bytes.Count(data[:offset], []byte("\n")) + 1
}
