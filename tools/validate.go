package tools

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ArgsError reports arguments that are not a JSON object or that violate
// the tool's schema. Its message is one line a model can act on:
//
//	invalid arguments for sleep: /ms: got string, want integer
type ArgsError struct {
	// Tool is the name of the tool called.
	Tool string
	// Problems are the violations, sorted, each as "<JSON pointer>: <what
	// is wrong>", the pointer left out for the arguments object itself.
	Problems []string
}

// Error returns "invalid arguments for <tool>: <problems joined by "; ">".
func (e *ArgsError) Error() string {
	return "invalid arguments for " + e.Tool + ": " + strings.Join(e.Problems, "; ")
}

// Validate checks args against the schema of the tool called name. An
// unknown name gives an error wrapping [ErrUnknownTool]; args that are not
// a JSON object or that violate the schema give an [*ArgsError]. Empty
// args (nil, blank or null) are treated as {}. It is safe for concurrent
// use.
func (s *Set) Validate(name string, args json.RawMessage) error {
	var e *entry
	if s != nil {
		e = s.byName[name]
	}
	if e == nil {
		return fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	v, err := decodeArgs(normalizeArgs(args))
	if err != nil {
		return &ArgsError{Tool: name, Problems: []string{"not valid JSON: " + err.Error()}}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return &ArgsError{Tool: name, Problems: []string{"got " + jsonType(v) + ", want object"}}
	}
	if e.plain != nil && e.plain.passes(obj) {
		return nil
	}
	err = e.schema.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return &ArgsError{Tool: name, Problems: []string{err.Error()}}
	}
	var problems []string
	collectProblems(ve, &problems)
	slices.Sort(problems)
	return &ArgsError{Tool: name, Problems: slices.Compact(problems)}
}

// printer renders the library's messages for kinds that problem does not
// word itself.
var printer = message.NewPrinter(language.English)

// collectProblems appends one line per leaf of the validation error tree.
func collectProblems(ve *jsonschema.ValidationError, out *[]string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectProblems(c, out)
		}
		return
	}
	msg := problem(ve.ErrorKind)
	if len(ve.InstanceLocation) > 0 {
		msg = pointer(ve.InstanceLocation) + ": " + msg
	}
	*out = append(*out, msg)
}

// problem words the common violations with double-quoted names.
func problem(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Required:
		if len(k.Missing) == 1 {
			return "missing property " + strconv.Quote(k.Missing[0])
		}
		return "missing properties " + quoteAll(k.Missing)
	case *kind.AdditionalProperties:
		if len(k.Properties) == 1 {
			return "property " + strconv.Quote(k.Properties[0]) + " is not allowed"
		}
		return "properties " + quoteAll(k.Properties) + " are not allowed"
	case *kind.Type:
		return "got " + k.Got + ", want " + strings.Join(k.Want, " or ")
	case *kind.Minimum:
		return "got " + ratString(k.Got) + ", want at least " + ratString(k.Want)
	case *kind.Maximum:
		return "got " + ratString(k.Got) + ", want at most " + ratString(k.Want)
	default:
		return k.LocalizedString(printer)
	}
}

// ratString renders a number as JSON would: 3, -1, 2.5.
func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// quoteAll quotes names and joins them in sorted order (the library lists
// some in map order).
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	slices.Sort(q)
	return strings.Join(q, ", ")
}

// pointer renders an instance location as a JSON pointer (RFC 6901).
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// jsonType names the JSON type of a value decoded by jsonschema.UnmarshalJSON.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}
