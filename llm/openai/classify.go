package openai

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/tack-run/tack/llm"
)

// class is what a server's error means for the request: something the
// user must fix (ending the request at once, with a message that says
// what), or a passing trouble worth a retry.
type class uint8

const (
	// classRetry: rate limits, overload, server errors, and errors that
	// say nothing usable; retried.
	classRetry class = iota
	// classAuth: the API key is missing or refused.
	classAuth
	// classForbidden: the key may not use the model.
	classForbidden
	// classModel: the server does not know the model.
	classModel
	// classPayment: the account needs credits.
	classPayment
	// classQuota: the key's quota is exhausted, a billing problem that
	// waiting does not fix.
	classQuota
	// classPolicy: the request was refused under the content policy.
	classPolicy
	// classInvalid: the server rejected the request as invalid.
	classInvalid
	// classNone: nothing known; only while classifying.
	classNone
)

// kindClasses classify error types, codes and textual statuses, in lower
// case: OpenAI's and Anthropic's types and codes, the exception names
// that LiteLLM and vLLM give as types, and Google's statuses.
var kindClasses = map[string]class{
	"invalid_api_key":        classAuth,
	"authentication_error":   classAuth,
	"authenticationerror":    classAuth,
	"invalid_authentication": classAuth,
	"unauthenticated":        classAuth,
	"unauthorized":           classAuth,

	"permission_error":      classForbidden,
	"permission_denied":     classForbidden,
	"permissiondeniederror": classForbidden,

	"model_not_found": classModel,
	"not_found_error": classModel,
	"notfounderror":   classModel,
	"not_found":       classModel,

	"insufficient_quota": classQuota,

	"content_filter":              classPolicy,
	"content_policy_violation":    classPolicy,
	"contentpolicyviolationerror": classPolicy,

	"invalid_request_error":    classInvalid,
	"badrequesterror":          classInvalid,
	"unprocessableentityerror": classInvalid,
	"invalid_argument":         classInvalid,

	"rate_limit_exceeded":     classRetry,
	"rate_limit_error":        classRetry,
	"ratelimiterror":          classRetry,
	"resource_exhausted":      classRetry,
	"overloaded_error":        classRetry,
	"service_unavailable":     classRetry,
	"serviceunavailableerror": classRetry,
	"unavailable":             classRetry,
	"server_error":            classRetry,
	"api_error":               classRetry,
	"internal_error":          classRetry,
	"internalservererror":     classRetry,
	"internal":                classRetry,
	"timeout":                 classRetry,
}

// statusClass classifies an HTTP status; classNone when it says nothing.
func statusClass(status int) class {
	switch {
	case status == http.StatusUnauthorized:
		return classAuth
	case status == http.StatusPaymentRequired:
		return classPayment
	case status == http.StatusForbidden:
		return classForbidden
	case status == http.StatusNotFound:
		return classModel
	case status == http.StatusRequestTimeout, status == http.StatusConflict,
		status == http.StatusTooManyRequests, status >= 500:
		return classRetry
	case status >= 400:
		return classInvalid
	}
	return classNone
}

// kindClass classifies the error's code, else its textual status, else
// its type (the code is the most specific: OpenAI's refused key has type
// invalid_request_error and code invalid_api_key); else a message that
// says "overloaded"; else classNone.
func kindClass(e apiError) class {
	for _, k := range []string{e.code, e.statusText, e.typ} {
		if c, ok := kindClasses[strings.ToLower(strings.TrimSpace(k))]; ok {
			return c
		}
	}
	if e.has("overloaded") {
		return classRetry
	}
	return classNone
}

// classify tells what e means, the same way for an HTTP error response
// and for an error object in a stream that began with HTTP 200:
// insufficient_quota anywhere is a billing problem; else the status (the
// HTTP one, or a numeric code or status in the error object) decides,
// except that a plain 4xx gives way to a code or type that names what to
// fix (a refused key, an unknown model, a content policy); else the code
// or type decides; an error that says nothing usable is retried. A plain
// 4xx is never retried: Ollama, for one, types its 4xx errors api_error.
func classify(e apiError) class {
	if e.has("insufficient_quota") {
		return classQuota
	}
	sc, kc := statusClass(e.status), kindClass(e)
	switch {
	case sc == classInvalid && kc != classNone && kc != classRetry:
		return kc
	case sc != classNone:
		return sc
	case kc != classNone:
		return kc
	}
	return classRetry
}

// failure turns e into the failure of an attempt: whether it is retried,
// and a message that says what to fix (the key's variable, the model, the
// base URL) when it is not. header, when not nil, holds the response
// headers (Retry-After); model is the model requested.
func (p *Provider) failure(e apiError, header http.Header, model string) *failure {
	msg := e.message
	if msg == "" {
		msg = http.StatusText(e.status)
	}
	if msg == "" {
		msg = strings.TrimSpace(e.typ + " " + e.code)
	}
	msg = truncate(msg, 1000)
	f := &failure{err: &llm.Error{Status: e.status, Message: msg}}
	if header != nil {
		f.retryAfter, f.hasRetryAfter = retryAfter(header, p.now())
	}
	server := " (server: " + msg + ")"
	if isOverflow(e.raw + " " + e.typ + " " + e.code + " " + e.message) {
		f.err.Overflow = true
		f.err.Message = "the conversation does not fit the model's context window" + server
		return f
	}
	switch classify(e) {
	case classRetry:
		f.retryable = true
	case classAuth:
		f.err.Message = p.keyHint(model) + server
	case classForbidden:
		f.err.Message = fmt.Sprintf("access to model %q at %s was denied: check that the API key%s may use it", model, p.baseURL, p.keyEnvText()) + server
	case classModel:
		f.err.Message = fmt.Sprintf("model %q not found at %s: check the model name, and that the base URL ends in /v1 (or the server's equivalent)", model, p.baseURL) + server
	case classPayment:
		f.err.Message = fmt.Sprintf("payment required at %s: check the credits of the account of the API key%s", p.baseURL, p.keyEnvText()) + server
	case classQuota:
		f.err.Message = fmt.Sprintf("the quota of the API key%s is exhausted: check its plan and billing", p.keyEnvText()) + server
	case classPolicy:
		f.err.Message = fmt.Sprintf("the server at %s refused the request to model %q under its content policy", p.baseURL, model) + server
	default:
		f.err.Message = fmt.Sprintf("the server at %s rejected the request to model %q", p.baseURL, model) + server
	}
	return f
}

// keyHint says what to do about a refused (or missing) API key.
func (p *Provider) keyHint(model string) string {
	switch {
	case p.apiKey == "" && p.keyEnv != "":
		return fmt.Sprintf("the server at %s wants an API key for model %q: set $%s", p.baseURL, model, p.keyEnv)
	case p.apiKey == "":
		return fmt.Sprintf("the server at %s wants an API key for model %q: name its environment variable in the provider's api_key_env", p.baseURL, model)
	case p.keyEnv != "":
		return fmt.Sprintf("the server at %s refused the API key for model %q: check $%s", p.baseURL, model, p.keyEnv)
	}
	return fmt.Sprintf("the server at %s refused the API key for model %q: check the provider's api_key_env", p.baseURL, model)
}

// keyEnvText names the key's environment variable, if known, for messages.
func (p *Provider) keyEnvText() string {
	if p.keyEnv == "" {
		return ""
	}
	return " in $" + p.keyEnv
}
