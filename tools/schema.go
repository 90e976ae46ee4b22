package tools

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles the argument schema of the tool called name. The
// schema must be a JSON object with "type": "object", as providers require
// for function parameters. References to anything but the schema itself
// and the standard metaschemas are refused: compiling never reads files or
// the network. A schema that is a plainSchema is returned as one too.
func compileSchema(name string, raw []byte) (*jsonschema.Schema, *plainSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("not valid JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, nil, errors.New("not a JSON object")
	}
	if obj["type"] != "object" {
		return nil, nil, errors.New(`want "type": "object" at the top level`)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	loc := "tack:tools/" + url.PathEscape(name) + ".json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, nil, err
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, nil, err
	}
	return sch, plain(obj), nil
}
