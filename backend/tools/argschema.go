package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// ArgSchema is a JSON schema written by someone else (a plugin's parameters, an MCP tool's
// input schema), checked once, against which a call's arguments are decoded as strictly as
// the built-in tools' (see Decode): unknown, missing or mistyped arguments are errors.
type ArgSchema struct {
	raw      json.RawMessage
	resolved *jsonschema.Resolved
}

// jsonTypes are the type names a JSON schema may use.
var jsonTypes = map[string]bool{"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true}

// CompileArgs checks that raw is a JSON schema of an object (what a tool takes) and returns
// it ready to decode with. Unless the schema says what other properties may be, it is
// closed (additionalProperties false) so a misspelt argument is an error, not ignored; the
// schema the model is shown says so too. A nil or empty schema means no arguments.
func CompileArgs(raw json.RawMessage) (*ArgSchema, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var top map[string]any
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("is not a JSON object (%v)", err)
	}
	if typ, ok := top["type"]; !ok || typ != "object" {
		return nil, fmt.Errorf(`must have "type": "object" (a tool takes an object of named arguments), got %v`, typ)
	}
	if err := checkTypes(top, ""); err != nil {
		return nil, err
	}
	if _, ok := top["additionalProperties"]; !ok {
		top["additionalProperties"] = false
	}
	if _, ok := top["properties"]; !ok {
		top["properties"] = map[string]any{}
	}
	closed, err := json.Marshal(top)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(closed, &s); err != nil {
		return nil, fmt.Errorf("is not a valid JSON schema (%v)", err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("is not a valid JSON schema (%v)", err)
	}
	return &ArgSchema{raw: closed, resolved: resolved}, nil
}

// checkTypes walks a schema for "type" values that are no JSON type: the library accepts
// {"type": "objekt"} and would then refuse every call.
func checkTypes(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if k == "type" {
				names := []any{sub}
				if list, ok := sub.([]any); ok {
					names = list
				}
				for _, n := range names {
					if s, ok := n.(string); !ok || !jsonTypes[s] {
						return fmt.Errorf("%s/type: %v is not a JSON type (use object, array, string, number, integer, boolean or null)", at, n)
					}
				}
				continue
			}
			if k == "enum" || k == "const" || k == "default" || k == "examples" {
				continue // values, not schemas
			}
			if err := checkTypes(sub, at+"/"+k); err != nil {
				return err
			}
		}
	case []any:
		for i, sub := range v {
			if err := checkTypes(sub, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// JSON is the schema as the model is shown it (closed, see CompileArgs).
func (s *ArgSchema) JSON() json.RawMessage { return s.raw }

// Decode checks a call's arguments against the schema and returns them as a JSON object.
// The error says which argument is wrong and how, for the model to correct.
func (s *ArgSchema) Decode(args json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var plain map[string]any
	if err := json.Unmarshal(args, &plain); err != nil || plain == nil {
		return nil, fmt.Errorf("the arguments are not a JSON object")
	}
	if err := s.resolved.Validate(plain); err != nil {
		msg := strings.TrimPrefix(err.Error(), "validating root: ")
		msg = strings.ReplaceAll(msg, "validating /properties/", "argument ")
		return nil, fmt.Errorf("%s", msg)
	}
	return plain, nil
}
