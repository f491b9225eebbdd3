package fleet

import (
	"fmt"
	"slices"

	"github.com/clusterspace/clusterspace/backend/worktree"
)

// MaxCopy bounds a fleet file's `copy:`: a few config files, not a second checkout.
const MaxCopy = 100

// parseCopy reads `copy:`, a list of paths relative to the repository's top-level dir; a
// mistake names the line of the entry.
func parseCopy(data []byte, v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &FieldError{Field: "copy", Msg: "is a list of untracked files or dirs of the repository, such as copy: [.env, config/local.yaml]"}
	}
	if len(list) == 0 {
		return nil, &FieldError{Field: "copy", Msg: "is empty: list files such as .env, or remove copy"}
	}
	var out []string
	for i, x := range list {
		s, ok := x.(string)
		if !ok {
			s = fmt.Sprint(x)
			if x == nil {
				s = ""
			}
		}
		clean, err := checkCopyEntry(out, s)
		if err != nil {
			return nil, &FieldError{Field: "copy", Msg: err.Error(), Line: copyLine(data, i)}
		}
		out = append(out, clean)
	}
	return out, nil
}

// checkCopy checks a fleet's `copy:` as given whole (a fleet made through the API rather than
// from a file).
func checkCopy(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		clean, err := checkCopyEntry(out, p)
		if err != nil {
			return nil, &FieldError{Field: "copy", Msg: err.Error()}
		}
		out = append(out, clean)
	}
	return out, nil
}

func checkCopyEntry(seen []string, p string) (string, error) {
	if len(seen) >= MaxCopy {
		return "", fmt.Errorf("more than %d entries; copy a dir holding them instead", MaxCopy)
	}
	clean, err := worktree.CheckCopyPath(p)
	if err != nil {
		return "", err
	}
	if slices.Contains(seen, clean) {
		return "", fmt.Errorf("%q is listed twice", p)
	}
	return clean, nil
}

// copyLine is the line of the i-th entry of `copy:` (0 when the file does not say).
func copyLine(data []byte, i int) int {
	return yamlLine(data, fmt.Sprintf("$.copy[%d]", i), "$.copy")
}
