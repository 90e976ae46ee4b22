package llm

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Image is an image of a user message: a data URL or an https URL, and
// the detail the model should look at it with.
type Image = eventsv1.Image

// DefaultMaxImageBytes bounds the decoded bytes of one data-URL image.
const DefaultMaxImageBytes = 5 << 20

// Image estimates: an image counts as ImageTokens tokens in the context
// estimate, LowDetailImageTokens with detail "low" — what OpenAI charges
// for a 512×512 tile at high detail plus the base (85 + 170×4, a
// 1024×1024 image) and for any image at low detail.
const (
	ImageTokens          = 765
	LowDetailImageTokens = 85
)

// imageTypes are the media types a data URL may have, with the bytes
// each format starts with.
var imageTypes = map[string][][]byte{
	"image/png":  {[]byte("\x89PNG\r\n\x1a\n")},
	"image/jpeg": {[]byte("\xff\xd8\xff")},
	"image/gif":  {[]byte("GIF87a"), []byte("GIF89a")},
	"image/webp": {[]byte("RIFF")},
}

// UserMessageWith returns a user message with text and images.
func UserMessageWith(text string, images []*Image) *Message {
	m := UserMessage(text)
	m.Images = images
	return m
}

// CheckImages reports the first image a prompt or steering message may
// not carry, naming it by its index: a URL that is neither a data URL nor
// https, a detail other than auto, low or high, a data URL that is not
// base64, whose media type is not PNG, JPEG, GIF or WebP, whose bytes do
// not start with that format's signature, or whose decoded size exceeds
// maxBytes (<= 0: DefaultMaxImageBytes).
func CheckImages(images []*Image, maxBytes int64) error {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxImageBytes
	}
	for i, img := range images {
		if err := checkImage(img, maxBytes); err != nil {
			return fmt.Errorf("images[%d]: %w", i, err)
		}
	}
	return nil
}

func checkImage(img *Image, maxBytes int64) error {
	switch img.GetDetail() {
	case "", "auto", "low", "high":
	default:
		return fmt.Errorf("detail %q: want auto, low or high", img.GetDetail())
	}
	url := img.GetUrl()
	if strings.HasPrefix(url, "https://") {
		return nil
	}
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return fmt.Errorf("url must be a data: URL or https://, not %q", short(url))
	}
	meta, data, ok := strings.Cut(rest, ",")
	mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isBase64 {
		return fmt.Errorf("a data URL must be data:<type>;base64,<data>")
	}
	sigs, known := imageTypes[mediaType]
	if !known {
		return fmt.Errorf("media type %q: want image/png, image/jpeg, image/gif or image/webp", mediaType)
	}
	tooLarge := fmt.Errorf("the image is larger than the limit of %d bytes", maxBytes)
	if n := int64(base64.StdEncoding.DecodedLen(len(data))); n > maxBytes+2 { // DecodedLen counts the padding too
		return tooLarge
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return fmt.Errorf("the data URL is not base64: %v", err)
	}
	if int64(len(raw)) > maxBytes {
		return tooLarge
	}
	for _, sig := range sigs {
		if bytes.HasPrefix(raw, sig) && (mediaType != "image/webp" || len(raw) >= 12 && string(raw[8:12]) == "WEBP") {
			return nil
		}
	}
	return fmt.Errorf("the bytes are not %s: they do not start with its signature", mediaType)
}

// short cuts a long URL for an error message.
func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// imageTokens is the estimate of an image (see ImageTokens).
func imageTokens(img *Image) int64 {
	if img.GetDetail() == "low" {
		return LowDetailImageTokens
	}
	return ImageTokens
}
