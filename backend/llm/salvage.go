package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// SalvageArgs turns the argument text a model sent for a tool call into a JSON object, or
// explains why it cannot without guessing. It accepts:
//   - a valid JSON object, returned as is (empty text counts as {});
//   - an object followed by stray closing braces or brackets ({"a":1}});
//   - an object encoded once more as a JSON string ("{\"a\":1}");
//   - exactly one object inside surrounding prose or a ``` code fence.
//
// Anything else — cut-off JSON, two candidate objects, a brace region that is not JSON,
// an array or a number — is an error whose text tells the model what to send instead.
func SalvageArgs(raw string) (json.RawMessage, error) {
	text := strings.TrimSpace(raw)
	if text == "" {
		return json.RawMessage("{}"), nil
	}
	if json.Valid([]byte(text)) {
		switch text[0] {
		case '{':
			return json.RawMessage(text), nil
		case '"':
			var inner string
			if json.Unmarshal([]byte(text), &inner) == nil {
				inner = strings.TrimSpace(inner)
				if strings.HasPrefix(inner, "{") && json.Valid([]byte(inner)) {
					return json.RawMessage(inner), nil
				}
			}
		}
		return nil, errors.New("the arguments are JSON but not an object: send one JSON object whose fields match the tool's schema")
	}
	if obj, ok := objectThenClosers(text); ok {
		return obj, nil
	}
	spans, open := braceSpans(text)
	var objects []string
	for _, s := range spans {
		if !json.Valid([]byte(s)) {
			return nil, fmt.Errorf("the arguments are not valid JSON (near %q): send one JSON object whose fields match the tool's schema", clip(s))
		}
		objects = append(objects, s)
	}
	switch {
	case len(objects) == 1 && !open:
		return json.RawMessage(objects[0]), nil
	case len(objects) > 1:
		return nil, fmt.Errorf("the arguments hold %d JSON objects, so which one was meant is unclear: send exactly one JSON object", len(objects))
	case open:
		return nil, errors.New("the arguments are cut off (a '{' is never closed): send the complete JSON object")
	}
	return nil, errors.New("the arguments are not a JSON object: send one JSON object whose fields match the tool's schema")
}

// objectThenClosers accepts a JSON object followed only by stray '}' or ']'.
func objectThenClosers(text string) (json.RawMessage, bool) {
	if text[0] != '{' {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(text))
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return nil, false
	}
	rest := strings.TrimSpace(text[dec.InputOffset():])
	if rest == "" || strings.Trim(rest, "}] \t\r\n") != "" {
		return nil, false
	}
	return v, true
}

// braceSpans finds the top-level {…} regions of text, tracking JSON strings inside them so
// a brace in a string value does not count. open reports a region that never closes.
func braceSpans(text string) (spans []string, open bool) {
	depth, start := 0, 0
	inString, escaped := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if depth > 0 && inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = depth > 0
		case '{':
			if depth == 0 {
				start = i
			}
			depth++
		case '}':
			if depth > 0 {
				depth--
				if depth == 0 {
					spans = append(spans, text[start:i+1])
				}
			}
		}
	}
	return spans, depth > 0
}

func clip(s string) string {
	const most = 40 // enough to recognise the spot, short enough for a tool error
	if len(s) <= most {
		return s
	}
	return s[:most] + "…"
}
