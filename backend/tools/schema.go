package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Schema derives a JSON Schema object from a params struct, so a tool's schema cannot drift
// from the type its code decodes into. Field tags it reads:
//
//	json:"name,omitempty"  the property name; omitempty (or a pointer type) makes it optional
//	desc:"…"               the description the model reads
//	enum:"a|b|c"           allowed values
//	default:"…"            documented default (applied by the tool's code, not here)
func Schema(params any) json.RawMessage {
	t := reflect.TypeOf(params)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	b, err := json.Marshal(schemaOf(t))
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %v: %v", t, err))
	}
	return b
}

func schemaOf(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		required := []string{}
		addFields(t, props, &required)
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	default:
		panic(fmt.Sprintf("tools: params field of kind %v cannot be described to a model", t.Kind()))
	}
}

// addFields describes a struct's fields into props and required. A struct embedded without
// a json name lends its fields, as encoding/json decodes them: the fields many tools share
// (a browser pane's id) are declared once.
func addFields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			addFields(f.Type, props, required)
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := schemaOf(f.Type)
		if d := f.Tag.Get("desc"); d != "" {
			p["description"] = d
		}
		if e := f.Tag.Get("enum"); e != "" {
			p["enum"] = strings.Split(e, "|")
		}
		if d, ok := f.Tag.Lookup("default"); ok {
			p["default"] = defaultValue(f.Type, d)
		}
		props[name] = p
		if !strings.Contains(opts, "omitempty") && f.Type.Kind() != reflect.Pointer {
			*required = append(*required, name)
		}
	}
}

// defaultValue turns a default tag into a JSON value of the field's type.
func defaultValue(t reflect.Type, s string) any {
	var v any
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.String && json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return s
}
