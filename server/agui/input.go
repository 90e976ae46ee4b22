package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// RunAgentInput is the part of AG-UI's RunAgentInput that Tack reads.
// Other fields (state, tools, context, forwardedProps) are accepted and
// ignored: the session's own configuration decides its tools.
type RunAgentInput struct {
	ThreadID string        `json:"threadId"`
	RunID    string        `json:"runId"`
	Messages []Message     `json:"messages"`
	Resume   []ResumeEntry `json:"resume"`
}

// Message is one message of RunAgentInput.messages.
type Message struct {
	ID   string `json:"id"`
	Role string `json:"role"`
	// Content is a string or an array of content parts.
	Content json.RawMessage `json:"content"`
}

// ResumeEntry answers one interrupt of the previous run.
type ResumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload"`
}

// The resume statuses.
const (
	StatusResolved  = "resolved"
	StatusCancelled = "cancelled"
)

// ParseInput decodes and checks a RunAgentInput. The error names the field
// that is wrong.
func ParseInput(body []byte) (*RunAgentInput, error) {
	var in RunAgentInput
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("the body is not a RunAgentInput: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("the body holds more than one JSON value")
	}
	if in.ThreadID == "" {
		return nil, fmt.Errorf("threadId is missing")
	}
	if in.RunID == "" {
		return nil, fmt.Errorf("runId is missing")
	}
	for i, r := range in.Resume {
		if r.InterruptID == "" {
			return nil, fmt.Errorf("resume[%d].interruptId is missing", i)
		}
		if r.Status != StatusResolved && r.Status != StatusCancelled {
			return nil, fmt.Errorf("resume[%d].status is %q, not %q or %q", i, r.Status, StatusResolved, StatusCancelled)
		}
	}
	return &in, nil
}

// Prompt is the text of the last user message: the new prompt of a run
// that does not resume one.
func (in *RunAgentInput) Prompt() (string, error) {
	for i := len(in.Messages) - 1; i >= 0; i-- {
		if in.Messages[i].Role != "user" {
			continue
		}
		text, err := contentText(in.Messages[i].Content)
		if err != nil {
			return "", fmt.Errorf("messages[%d].content %v", i, err)
		}
		if strings.TrimSpace(text) == "" {
			return "", fmt.Errorf("messages[%d].content is empty", i)
		}
		return text, nil
	}
	return "", fmt.Errorf("messages holds no user message and resume is empty: nothing to run")
}

// contentText reads a message's content: a string, or text parts joined by
// blank lines. Tack prompts are text, so other parts are refused.
func contentText(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("is neither a string nor an array of content parts")
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return "", fmt.Errorf("[%d] is a %q part; only text parts are supported", j, p.Type)
		}
		texts = append(texts, *p.Text)
	}
	return strings.Join(texts, "\n\n"), nil
}

// approvalAnswer is the payload that resolves an approval interrupt.
type approvalAnswer struct {
	Approved *bool  `json:"approved"`
	Always   bool   `json:"always"`
	Reason   string `json:"reason"`
}

// parseApproval reads the payload of resume entry i for an approval.
func parseApproval(i int, raw json.RawMessage) (approvalAnswer, error) {
	var a approvalAnswer
	if err := json.Unmarshal(orNull(raw), &a); err != nil || a.Approved == nil {
		return a, fmt.Errorf(`resume[%d].payload must be {"approved": true|false, "always"?: bool, "reason"?: string} for an approval`, i)
	}
	return a, nil
}

// parseResponse reads the payload of resume entry i for a question: a
// string or {"response": string}.
func parseResponse(i int, raw json.RawMessage) (string, error) {
	var s *string
	if err := json.Unmarshal(orNull(raw), &s); err == nil && s != nil {
		return *s, nil
	}
	var r struct {
		Response *string `json:"response"`
	}
	if err := json.Unmarshal(orNull(raw), &r); err != nil || r.Response == nil {
		return "", fmt.Errorf(`resume[%d].payload must be {"response": string} or a string`, i)
	}
	return *r.Response, nil
}

// orNull makes an absent payload decode as null.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
