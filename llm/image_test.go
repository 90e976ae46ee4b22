package llm

import (
	"encoding/base64"
	"strings"
	"testing"
)

// dataURL is a data URL of media type typ holding raw.
func dataURL(typ string, raw []byte) string {
	return "data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(raw)
}

func TestCheckImages(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 50)...)
	webp := []byte("RIFF\x00\x00\x00\x00WEBPVP8 ")
	for _, tc := range []struct {
		name string
		img  *Image
		max  int64
		want string // "" for no error
	}{
		{"png", &Image{Url: dataURL("image/png", png)}, 0, ""},
		{"jpeg", &Image{Url: dataURL("image/jpeg", []byte("\xff\xd8\xff\xe0rest")), Detail: "low"}, 0, ""},
		{"gif", &Image{Url: dataURL("image/gif", []byte("GIF89a...")), Detail: "high"}, 0, ""},
		{"webp", &Image{Url: dataURL("image/webp", webp), Detail: "auto"}, 0, ""},
		{"https", &Image{Url: "https://example.com/cat.png"}, 0, ""},
		{"at the limit", &Image{Url: dataURL("image/png", png)}, int64(len(png)), ""},
		{"over the limit", &Image{Url: dataURL("image/png", png)}, int64(len(png)) - 1, "larger than the limit of 57 bytes"},
		{"far over the limit", &Image{Url: dataURL("image/png", png)}, 8, "larger than the limit of 8 bytes"},
		{"type", &Image{Url: dataURL("image/svg+xml", []byte("<svg/>"))}, 0, `media type "image/svg+xml"`},
		{"signature", &Image{Url: dataURL("image/png", []byte("GIF89a..."))}, 0, "the bytes are not image/png"},
		{"webp without WEBP", &Image{Url: dataURL("image/webp", []byte("RIFF\x00\x00\x00\x00WAVEfmt "))}, 0, "the bytes are not image/webp"},
		{"not base64", &Image{Url: "data:image/png;base64,@@@@"}, 0, "not base64"},
		{"not base64 encoded", &Image{Url: "data:image/png,abc"}, 0, "data:<type>;base64,<data>"},
		{"http", &Image{Url: "http://example.com/cat.png"}, 0, "must be a data: URL or https://"},
		{"detail", &Image{Url: "https://example.com/cat.png", Detail: "max"}, 0, `detail "max"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckImages([]*Image{{Url: "https://ok.example/a.png"}, tc.img}, tc.max)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "images[1]: ")):
				t.Fatalf("error %v, want images[1]: ...%s", err, tc.want)
			}
		})
	}
}

// TestImageEstimate: each image counts its fixed tokens in the estimate.
func TestImageEstimate(t *testing.T) {
	m := UserMessageWith("abcd", []*Image{{Url: "https://x"}, {Url: "https://y", Detail: "low"}})
	if got, want := EstimateMessageTokens(m), int64(1+ImageTokens+LowDetailImageTokens); got != want {
		t.Fatalf("estimate %d, want %d", got, want)
	}
}
