package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	eventsv1 "github.com/tack-run/tack/events/v1"
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
	text, _, err := in.PromptInput()
	return text, err
}

// PromptInput is the text and images of the last user message: the new
// prompt of a run that does not resume one. A message of images alone is
// a prompt too.
func (in *RunAgentInput) PromptInput() (string, []*eventsv1.Image, error) {
	for i := len(in.Messages) - 1; i >= 0; i-- {
		if in.Messages[i].Role != "user" {
			continue
		}
		text, images, err := content(in.Messages[i].Content)
		if err != nil {
			return "", nil, fmt.Errorf("messages[%d].content %v", i, err)
		}
		if strings.TrimSpace(text) == "" && len(images) == 0 {
			return "", nil, fmt.Errorf("messages[%d].content is empty", i)
		}
		return text, images, nil
	}
	return "", nil, fmt.Errorf("messages holds no user message and resume is empty: nothing to run")
}

// part is an AG-UI input content part: text, binary (mimeType with data
// or url), or image (a source of type data or url).
type part struct {
	Type     string  `json:"type"`
	Text     *string `json:"text"`
	MimeType string  `json:"mimeType"`
	Data     string  `json:"data"`
	URL      string  `json:"url"`
	Source   *struct {
		Type     string `json:"type"`
		Value    string `json:"value"`
		MimeType string `json:"mimeType"`
	} `json:"source"`
}

// content reads a message's content: a string, or text parts joined by
// blank lines and image parts (binary with an image mimeType, or image),
// each made a Tack image: a data URL of its base64 data, or its URL.
// Other parts are refused; the session checks the images further.
func content(raw json.RawMessage) (string, []*eventsv1.Image, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil, nil
	}
	var parts []part
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, fmt.Errorf("is neither a string nor an array of content parts")
	}
	texts := make([]string, 0, len(parts))
	var images []*eventsv1.Image
	for j, p := range parts {
		switch {
		case p.Type == "text" && p.Text != nil:
			texts = append(texts, *p.Text)
		case p.Type == "binary" && strings.HasPrefix(p.MimeType, "image/") && (p.Data != "" || p.URL != ""):
			images = append(images, image(p.MimeType, p.Data, p.URL))
		case p.Type == "image" && p.Source != nil && (p.Source.Type == "data" || p.Source.Type == "url") && p.Source.Value != "":
			if p.Source.Type == "data" {
				images = append(images, image(p.Source.MimeType, p.Source.Value, ""))
			} else {
				images = append(images, image("", "", p.Source.Value))
			}
		default:
			return "", nil, fmt.Errorf("[%d] is a %q part Tack does not take: text, image, and binary parts of an image/* mimeType with data or url are", j, p.Type)
		}
	}
	return strings.Join(texts, "\n\n"), images, nil
}

// image is the Tack image of an image part: its base64 data as a data URL
// of mimeType, else its URL.
func image(mimeType, data, url string) *eventsv1.Image {
	if data != "" {
		return &eventsv1.Image{Url: "data:" + mimeType + ";base64," + data}
	}
	return &eventsv1.Image{Url: url}
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
