package openai

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
)

// streamError answers HTTP 200 and streams events, the way gateways
// report an error that arrives after the response headers: an optional
// keep-alive comment, then the error event(s) given, each ending in "\n\n".
func streamError(events ...string) http.HandlerFunc {
	return sse(": keep-alive\n\n" + strings.Join(events, ""))
}

// data is one SSE data event.
func data(json string) string { return "data: " + json + "\n\n" }

// anthropicError is an error event as Anthropic-compatible gateways send it.
func anthropicError(typ, message string) string {
	return "event: error\n" + data(`{"type":"error","error":{"type":"`+typ+`","message":"`+message+`"}}`)
}

// TestErrorClasses sends each class of server error both as an HTTP error
// response and as an error event in a stream that began with HTTP 200, and
// asserts that both are classified alike: fixable errors end the request
// at once with a message that says what to fix, passing ones are retried.
func TestErrorClasses(t *testing.T) {
	const (
		key       = "the server at <base> refused the API key for model \"test-model\": check $OPENAI_API_KEY (server: "
		notFound  = "model \"test-model\" not found at <base>: check the model name, and that the base URL ends in /v1 (or the server's equivalent) (server: "
		rejected  = "the server at <base> rejected the request to model \"test-model\" (server: "
		policy    = "the server at <base> refused the request to model \"test-model\" under its content policy (server: "
		overflow  = "the conversation does not fit the model's context window (server: "
		payment   = "payment required at <base>: check the credits of the account of the API key in $OPENAI_API_KEY (server: "
		quota     = "the quota of the API key in $OPENAI_API_KEY is exhausted: check its plan and billing (server: "
		badKey    = `{"error":{"message":"Incorrect API key provided: sk-x.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
		noModel   = "{\"error\":{\"message\":\"The model `test-model` does not exist or you do not have access to it.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"model_not_found\"}}"
		badTemp   = `{"error":{"message":"Invalid 'temperature': decimal above maximum value.","type":"invalid_request_error","param":"temperature","code":"decimal_above_max_value"}}`
		filtered  = `{"error":{"message":"The response was filtered due to the prompt triggering content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}`
		unsafe    = `{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","param":null,"code":"content_policy_violation"}}`
		tooLong   = `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
		noQuota   = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
		limited   = `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
		busy      = `{"error":{"message":"Overloaded","type":"overloaded_error"}}`
		serverErr = `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`
	)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		// err is the error that ends the request at once; nil when the
		// request is retried with reason, then succeeds.
		err    *llm.Error
		reason string
	}{
		// A bad or missing key.
		{name: "auth http 401", handler: fail(401, badKey),
			err: &llm.Error{Status: 401, Message: key + "Incorrect API key provided: sk-x.)"}},
		{name: "auth stream invalid_api_key", handler: streamError(data(badKey)),
			err: &llm.Error{Message: key + "Incorrect API key provided: sk-x.)"}},
		{name: "auth stream anthropic authentication_error", handler: streamError(anthropicError("authentication_error", "invalid x-api-key")),
			err: &llm.Error{Message: key + "invalid x-api-key)"}},
		{name: "auth stream numeric code 401", handler: streamError(data(`{"error":{"code":401,"message":"No auth credentials found"}}`)),
			err: &llm.Error{Status: 401, Message: key + "No auth credentials found)"}},

		// An unknown model.
		{name: "model http 404", handler: fail(404, noModel),
			err: &llm.Error{Status: 404, Message: notFound + "The model `test-model` does not exist or you do not have access to it.)"}},
		{name: "model stream model_not_found", handler: streamError(data(noModel)),
			err: &llm.Error{Message: notFound + "The model `test-model` does not exist or you do not have access to it.)"}},
		{name: "model stream anthropic not_found_error", handler: streamError(anthropicError("not_found_error", "model: test-model")),
			err: &llm.Error{Message: notFound + "model: test-model)"}},

		// An invalid request.
		{name: "invalid http 400", handler: fail(400, badTemp),
			err: &llm.Error{Status: 400, Message: rejected + "Invalid 'temperature': decimal above maximum value.)"}},
		{name: "invalid stream invalid_request_error", handler: streamError(data(badTemp)),
			err: &llm.Error{Message: rejected + "Invalid 'temperature': decimal above maximum value.)"}},
		{name: "invalid http 413 typed api_error", handler: fail(413, `{"error":{"message":"request body too large","type":"api_error","param":null,"code":null}}`),
			err: &llm.Error{Status: 413, Message: rejected + "request body too large)"}},
		{name: "invalid stream numeric status 422", handler: streamError(data(`{"error":{"message":"messages: field required","status":422}}`)),
			err: &llm.Error{Status: 422, Message: rejected + "messages: field required)"}},

		// A content policy refusal.
		{name: "policy http 400 content_filter", handler: fail(400, filtered),
			err: &llm.Error{Status: 400, Message: policy + "The response was filtered due to the prompt triggering content management policy.)"}},
		{name: "policy stream content_filter", handler: streamError(data(filtered)),
			err: &llm.Error{Status: 400, Message: policy + "The response was filtered due to the prompt triggering content management policy.)"}},
		{name: "policy http 400 content_policy_violation", handler: fail(400, unsafe),
			err: &llm.Error{Status: 400, Message: policy + "Your request was rejected as a result of our safety system.)"}},
		{name: "policy stream content_policy_violation", handler: streamError(data(unsafe)),
			err: &llm.Error{Message: policy + "Your request was rejected as a result of our safety system.)"}},

		// A context overflow.
		{name: "overflow http 400", handler: fail(400, tooLong),
			err: &llm.Error{Status: 400, Overflow: true, Message: overflow + "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.)"}},
		{name: "overflow stream context_length_exceeded", handler: streamError(data(tooLong)),
			err: &llm.Error{Overflow: true, Message: overflow + "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.)"}},
		{name: "overflow stream code only", handler: streamError(data(`{"error":{"message":"Request too large","code":"context_length_exceeded"}}`)),
			err: &llm.Error{Overflow: true, Message: overflow + "Request too large)"}},
		{name: "overflow stream anthropic", handler: streamError(anthropicError("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")),
			err: &llm.Error{Overflow: true, Message: overflow + "prompt is too long: 210000 tokens > 200000 maximum)"}},

		// An exhausted quota: billing, not retried.
		{name: "quota http 429", handler: fail(429, noQuota),
			err: &llm.Error{Status: 429, Message: quota + "You exceeded your current quota, please check your plan and billing details.)"}},
		{name: "quota stream insufficient_quota", handler: streamError(data(noQuota)),
			err: &llm.Error{Message: quota + "You exceeded your current quota, please check your plan and billing details.)"}},

		// Credits to buy.
		{name: "payment http 402", handler: fail(402, `{"error":{"message":"Insufficient credits. Add more using https://openrouter.ai/credits","code":402}}`),
			err: &llm.Error{Status: 402, Message: payment + "Insufficient credits. Add more using https://openrouter.ai/credits)"}},
		{name: "payment stream numeric code 402", handler: streamError(data(`{"error":{"message":"Insufficient credits. Add more using https://openrouter.ai/credits","code":402}}`)),
			err: &llm.Error{Status: 402, Message: payment + "Insufficient credits. Add more using https://openrouter.ai/credits)"}},

		// A rate limit.
		{name: "rate limit http 429", handler: fail(429, limited),
			reason: "HTTP 429: Rate limit reached for requests"},
		{name: "rate limit stream rate_limit_exceeded", handler: streamError(data(limited)),
			reason: "Rate limit reached for requests"},
		{name: "rate limit stream anthropic rate_limit_error", handler: streamError(anthropicError("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")),
			reason: "Number of request tokens has exceeded your per-minute rate limit"},
		{name: "rate limit stream google status", handler: streamError(data(`{"error":{"code":"rate_limited","message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`)),
			reason: "Resource has been exhausted (e.g. check quota)."},

		// Overload.
		{name: "overload http 529", handler: fail(529, busy), reason: "HTTP 529: Overloaded"},
		{name: "overload http 503", handler: fail(503, `{"error":{"message":"Service Unavailable","type":"service_unavailable"}}`), reason: "HTTP 503: Service Unavailable"},
		{name: "overload stream overloaded_error", handler: streamError(data(busy)), reason: "Overloaded"},
		{name: "overload stream anthropic overloaded_error", handler: streamError(anthropicError("overloaded_error", "Overloaded")), reason: "Overloaded"},
		{name: "overload stream numeric status 503", handler: streamError(data(`{"error":{"message":"The upstream is busy","status":503}}`)), reason: "HTTP 503: The upstream is busy"},

		// A server error.
		{name: "server http 500", handler: fail(500, serverErr), reason: "HTTP 500: The server had an error while processing your request."},
		{name: "server stream server_error", handler: streamError(data(serverErr)), reason: "The server had an error while processing your request."},
		{name: "server stream anthropic api_error", handler: streamError(anthropicError("api_error", "Internal server error")), reason: "Internal server error"},
		{name: "server stream unrecognised", handler: streamError(data(`{"error":"something went wrong"}`)), reason: "something went wrong"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handler, sse(openAILength))
			p, sl := srv.provider(WithAPIKey("sk-x"), WithAPIKeyEnv("OPENAI_API_KEY"))
			chunks, _, err := llmtest.Collect(t, p, request())
			got := show(chunks)
			if tt.err != nil {
				e := asError(t, err)
				e.Message = normalize(e.Message, srv.URL)
				equal(t, "error", *e, *tt.err)
				equal(t, "chunks", got, []string{})
				equal(t, "requests", srv.requests(), 1)
				equal(t, "waits", len(sl.delays), 0)
				return
			}
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			equal(t, "chunks", got, []string{"retry 1 1s " + tt.reason, "text Once upon"})
			equal(t, "requests", srv.requests(), 2)
			equal(t, "waits", sl.delays, []time.Duration{time.Second})
		})
	}
}

// TestStreamErrorAfterOutput: an error event after text has been streamed
// is classified like any other, but never retried, since output went out.
func TestStreamErrorAfterOutput(t *testing.T) {
	text := strings.Join(strings.SplitAfter(openAIText, "\n\n")[:2], "")
	tests := []struct {
		name  string
		event string
		err   llm.Error
	}{
		{
			name:  "content policy",
			event: data(`{"error":{"message":"The response was filtered due to the prompt triggering content management policy.","type":null,"param":"prompt","code":"content_filter"}}`),
			err:   llm.Error{Message: "the server at <base> refused the request to model \"test-model\" under its content policy (server: The response was filtered due to the prompt triggering content management policy.)"},
		},
		{
			name:  "overloaded",
			event: anthropicError("overloaded_error", "Overloaded"),
			err:   llm.Error{Message: "Overloaded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, sse(text+tt.event), sse(openAILength))
			p, sl := srv.provider()
			chunks, _, err := llmtest.Collect(t, p, request())
			e := asError(t, err)
			e.Message = normalize(e.Message, srv.URL)
			equal(t, "error", *e, tt.err)
			equal(t, "chunks", show(chunks), []string{"text Hello"})
			equal(t, "requests", srv.requests(), 1)
			equal(t, "waits", len(sl.delays), 0)
		})
	}
}
