package agui

import (
	"slices"
	"testing"
)

func TestPrompt(t *testing.T) {
	tests := []struct {
		name, body, prompt, err string
	}{
		{"a string", `{"threadId":"s","runId":"r","messages":[{"id":"1","role":"user","content":"hi"}]}`, "hi", ""},
		{"the last user message", `{"threadId":"s","runId":"r","messages":[{"id":"1","role":"user","content":"old"},{"id":"2","role":"assistant","content":"x"},{"id":"3","role":"user","content":"new"},{"id":"4","role":"tool","toolCallId":"c","content":"y"}]}`, "new", ""},
		{"text parts", `{"threadId":"s","runId":"r","messages":[{"id":"1","role":"user","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]}]}`, "one\n\ntwo", ""},
		{"empty", `{"threadId":"s","runId":"r","messages":[{"id":"1","role":"user","content":"  "}]}`, "", "messages[0].content is empty"},
		{"a number", `{"threadId":"s","runId":"r","messages":[{"id":"1","role":"user","content":7}]}`, "", "messages[0].content is neither a string nor an array of content parts"},
		{"no messages", `{"threadId":"s","runId":"r","messages":[]}`, "", "messages holds no user message and resume is empty: nothing to run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ParseInput([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := in.Prompt()
			if got != tc.prompt || errString(err) != tc.err {
				t.Errorf("got %q, %q; want %q, %q", got, errString(err), tc.prompt, tc.err)
			}
		})
	}
}

func TestParseInputErrors(t *testing.T) {
	tests := []struct{ name, body, err string }{
		{"two values", `{"threadId":"s","runId":"r"} {}`, "the body holds more than one JSON value"},
		{"wrong type", `{"threadId":5,"runId":"r"}`, "the body is not a RunAgentInput: json: cannot unmarshal number into Go struct field RunAgentInput.threadId of type string"},
		{"no interruptId", `{"threadId":"s","runId":"r","resume":[{"status":"resolved"}]}`, "resume[0].interruptId is missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseInput([]byte(tc.body))
			if errString(err) != tc.err {
				t.Errorf("got %q, want %q", errString(err), tc.err)
			}
		})
	}
}

func TestResumePayloads(t *testing.T) {
	a, err := parseApproval(0, []byte(`{"approved":false,"reason":"no","always":true}`))
	if err != nil || *a.Approved || a.Reason != "no" || !a.Always {
		t.Errorf("approval %+v, %v", a, err)
	}
	for _, bad := range []string{``, `{}`, `{"approved":"yes"}`, `true`} {
		if _, err := parseApproval(2, []byte(bad)); errString(err) != `resume[2].payload must be {"approved": true|false, "always"?: bool, "reason"?: string} for an approval` {
			t.Errorf("approval payload %q: %v", bad, err)
		}
	}
	for payload, want := range map[string]string{`"staging"`: "staging", `{"response":"prod"}`: "prod", `{"response":""}`: ""} {
		if got, err := parseResponse(0, []byte(payload)); got != want || err != nil {
			t.Errorf("response payload %s: %q, %v", payload, got, err)
		}
	}
	for _, bad := range []string{``, `{}`, `5`} {
		if _, err := parseResponse(1, []byte(bad)); errString(err) != `resume[1].payload must be {"response": string} or a string` {
			t.Errorf("response payload %q: %v", bad, err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestPromptImages: binary parts of an image type and image parts become
// the prompt's images, data as data URLs, in order after the text.
func TestPromptImages(t *testing.T) {
	in, err := ParseInput([]byte(`{"threadId":"s","runId":"r","messages":[{"id":"1","role":"user","content":[
		{"type":"text","text":"look"},
		{"type":"binary","mimeType":"image/png","data":"iVBORw0KGgo="},
		{"type":"binary","mimeType":"image/jpeg","url":"https://x/a.jpg","filename":"a.jpg"},
		{"type":"image","source":{"type":"data","value":"R0lGODlh","mimeType":"image/gif"}},
		{"type":"image","source":{"type":"url","value":"https://x/b.webp"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	text, images, err := in.PromptInput()
	var urls []string
	for _, img := range images {
		urls = append(urls, img.GetUrl())
	}
	want := []string{"data:image/png;base64,iVBORw0KGgo=", "https://x/a.jpg", "data:image/gif;base64,R0lGODlh", "https://x/b.webp"}
	if err != nil || text != "look" || !slices.Equal(urls, want) {
		t.Fatalf("got %q %q %v; want %q %q", text, urls, err, "look", want)
	}
}
