package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/tack-run/tack/llm"
)

// errorBodyLimit caps how much of an error response is read, in bytes.
const errorBodyLimit = 64 << 10

// apiError is an error a server reported: an HTTP error response, or an
// error object in the stream.
type apiError struct {
	// status is the HTTP status, or the numeric code of an error object
	// in the stream; 0 when there is none.
	status  int
	message string
	// kind is the error's type and code, as the server gave them.
	kind string
	// raw is the whole body, searched for overflow texts.
	raw string
}

// parseError reads the error bodies of the common servers:
//
//	{"error": {"message": ..., "type": ..., "code": ...}}    OpenAI, llama.cpp, Ollama, OpenRouter, vLLM ≥ 0.9
//	{"error": "message"}                                       Ollama's native API, some gateways
//	{"object": "error", "message": ..., "type": ..., "code": 400} vLLM before 0.9
//	{"detail": ...}                                            FastAPI servers
//
// and falls back to the body as text.
func parseError(status int, body []byte) apiError {
	e := apiError{status: status, raw: string(body)}
	var top struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &top) != nil {
		e.message = strings.TrimSpace(string(body))
		return e
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var text string
	hasError := len(top.Error) > 0 && !bytes.Equal(top.Error, []byte("null"))
	switch {
	case hasError && json.Unmarshal(top.Error, &text) == nil:
		e.message = text
	case hasError && top.Error[0] == '{' && json.Unmarshal(top.Error, &obj) == nil:
		e.message, e.kind = obj.Message, strings.TrimSpace(obj.Type+" "+codeText(obj.Code))
		if e.status == 0 {
			e.status = codeStatus(obj.Code)
		}
	case top.Message != "":
		e.message, e.kind = top.Message, strings.TrimSpace(top.Type+" "+codeText(top.Code))
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

// codeStatus returns an error code that is an HTTP status (429 or "429"),
// else 0.
func codeStatus(raw json.RawMessage) int {
	n, err := strconv.Atoi(codeText(raw))
	if err != nil || n < 100 || n > 599 {
		return 0
	}
	return n
}

// has tells whether the error's type, code or message contains word.
func (e apiError) has(word string) bool {
	return strings.Contains(strings.ToLower(e.kind+" "+e.message), word)
}

// failure classifies e. header, when not nil, holds the response headers
// (Retry-After); model names the model for the 404 message.
func (p *Provider) failure(e apiError, header http.Header, model string) *failure {
	msg := e.message
	if msg == "" {
		msg = http.StatusText(e.status)
	}
	msg = truncate(msg, 1000)
	f := &failure{err: &llm.Error{Status: e.status, Message: msg}}
	if header != nil {
		f.retryAfter, f.hasRetryAfter = retryAfter(header, p.now())
	}
	server := " (server: " + msg + ")"
	switch {
	case isOverflow(e.raw + " " + e.kind + " " + e.message):
		f.err.Overflow = true
		f.err.Message = "the conversation does not fit the model's context window" + server
	case e.status == http.StatusUnauthorized:
		f.err.Message = p.keyHint() + server
	case e.status == http.StatusForbidden:
		f.err.Message = fmt.Sprintf("access to model %q at %s was denied: check that the API key%s may use it", model, p.baseURL, p.keyEnvText()) + server
	case e.status == http.StatusNotFound:
		f.err.Message = fmt.Sprintf("model %q not found at %s: check the model name, and that the base URL ends in /v1 (or the server's equivalent)", model, p.baseURL) + server
	case e.status == http.StatusPaymentRequired:
		f.err.Message = "payment required: check the credits of the account" + server
	case e.status == http.StatusTooManyRequests && e.has("insufficient_quota"):
		f.err.Message = fmt.Sprintf("the quota of the API key%s is exhausted: check its plan and billing", p.keyEnvText()) + server
	case e.status == 0, e.status == http.StatusRequestTimeout, e.status == http.StatusConflict,
		e.status == http.StatusTooManyRequests, e.status >= 500, e.has("overloaded"):
		f.retryable = true
	default:
		f.err.Message = "the server rejected the request" + server
	}
	return f
}

// keyHint says what to do about a refused (or missing) API key.
func (p *Provider) keyHint() string {
	switch {
	case p.apiKey == "" && p.keyEnv != "":
		return fmt.Sprintf("the server at %s wants an API key: set $%s", p.baseURL, p.keyEnv)
	case p.apiKey == "":
		return fmt.Sprintf("the server at %s wants an API key: name its environment variable in the provider's api_key_env", p.baseURL)
	case p.keyEnv != "":
		return fmt.Sprintf("the API key was refused: check $%s", p.keyEnv)
	}
	return "the API key was refused: check the provider's api_key_env"
}

// keyEnvText names the key's environment variable, if known, for messages.
func (p *Provider) keyEnvText() string {
	if p.keyEnv == "" {
		return ""
	}
	return " in $" + p.keyEnv
}
