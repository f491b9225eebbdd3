// Package fileloc names the place in a file that a mistake is at, the way every loader of the
// config dir's files reports one (the catalog's, the plugins', mcp.json's): file:line: field.
package fileloc

import "strconv"

// String is file, then ":line" when line is above 0, then ": field" when a field is named.
func String(file string, line int, field string) string {
	at := file
	if line > 0 {
		at += ":" + strconv.Itoa(line)
	}
	if field != "" {
		at += ": " + field
	}
	return at
}
