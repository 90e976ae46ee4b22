package codec

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tack-run/tack/store"
)

// Cursor is a List position: the (updated_at, id) of the last record of a
// page; the next page starts strictly after it in (updated_at desc, id
// desc) order.
type Cursor struct {
	Updated time.Time
	ID      string
}

// EncodeCursor makes the opaque Listing.Next for c.
func EncodeCursor(c Cursor) string {
	raw := strconv.FormatInt(c.Updated.UnixMicro(), 10) + ":" + c.ID
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// DecodeCursor reads a Page.Cursor; a malformed one is ErrInvalid.
func DecodeCursor(s string) (Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: cursor %q", store.ErrInvalid, s)
	}
	us, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || id == "" {
		return Cursor{}, fmt.Errorf("%w: cursor %q", store.ErrInvalid, s)
	}
	return Cursor{Updated: time.UnixMicro(n).UTC(), ID: id}, nil
}
