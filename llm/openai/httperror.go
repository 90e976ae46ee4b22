package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// errorBodyLimit caps how much of an error response is read, in bytes.
const errorBodyLimit = 64 << 10

// apiError is an error a server reported: an HTTP error response, or an
// error object in the stream. Both are classified alike (see classify).
type apiError struct {
	// status is the HTTP status, else the numeric code or status field of
	// the error object; 0 when there is none.
	status  int
	message string
	// typ and code are the error's type and code as the server gave them
	// (a numeric code as text); statusText is a status field that is not
	// a number, such as Google's "RESOURCE_EXHAUSTED".
	typ, code, statusText string
	// raw is the whole body, searched for overflow texts.
	raw string
}

// errorFields are the fields of an error object, at the top of the body
// or under "error".
type errorFields struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Status  json.RawMessage `json:"status"`
}

// parseError reads the error bodies of the common servers, over HTTP or
// as an error event in the stream:
//
//	{"error": {"message": ..., "type": ..., "code": ...}}    OpenAI, llama.cpp, Ollama, OpenRouter, vLLM ≥ 0.9
//	{"type": "error", "error": {"type": ..., "message": ...}} Anthropic-compatible gateways
//	{"error": {"code": 429, "message": ..., "status": ...}}   Google-style gateways
//	{"error": "message"}                                       Ollama's native API, some gateways
//	{"object": "error", "message": ..., "type": ..., "code": 400} vLLM before 0.9
//	{"detail": ...}                                            FastAPI servers
//
// and falls back to the body as text. status is the HTTP status, 0 for an
// error in the stream; a numeric code or status in the body stands in
// for a missing one.
func parseError(status int, body []byte) apiError {
	e := apiError{status: status, raw: string(body)}
	var top struct {
		errorFields
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &top) != nil {
		e.message = strings.TrimSpace(string(body))
		return e
	}
	var obj errorFields
	var text string
	hasError := len(top.Error) > 0 && !bytes.Equal(top.Error, []byte("null"))
	switch {
	case hasError && json.Unmarshal(top.Error, &text) == nil:
		e.message = text
	case hasError && top.Error[0] == '{' && json.Unmarshal(top.Error, &obj) == nil:
		e.fill(&obj)
	case top.Message != "":
		e.fill(&top.errorFields)
	case len(top.Detail) > 0:
		if json.Unmarshal(top.Detail, &text) == nil {
			e.message = text
		} else {
			e.message = string(top.Detail)
		}
	default:
		e.message = strings.TrimSpace(string(body))
	}
	return e
}

// fill takes the message, type, code and status of an error object; a
// numeric code or status becomes the status when there is none yet.
func (e *apiError) fill(f *errorFields) {
	e.message, e.typ, e.code = f.Message, f.Type, codeText(f.Code)
	status := codeText(f.Status)
	if e.status == 0 {
		e.status = httpStatus(e.code)
	}
	if e.status == 0 {
		e.status = httpStatus(status)
	}
	if httpStatus(status) == 0 {
		e.statusText = status
	}
}

// codeText returns an error code, a string or a number, as text.
func codeText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if n, err := strconv.Atoi(string(bytes.TrimSpace(raw))); err == nil {
		return strconv.Itoa(n)
	}
	return ""
}

// httpStatus returns a code that is an HTTP error status (429, "429"),
// else 0.
func httpStatus(code string) int {
	n, err := strconv.Atoi(code)
	if err != nil || n < 400 || n > 599 {
		return 0
	}
	return n
}

// has tells whether the error's type, code, status or message contains
// word.
func (e apiError) has(word string) bool {
	return strings.Contains(strings.ToLower(e.typ+" "+e.code+" "+e.statusText+" "+e.message), word)
}
