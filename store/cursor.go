package store

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cursor is a List position: the (updated_at, id) of the last record of a
// page; the next page starts strictly after it in (updated_at desc, id
// desc) order. Times count to the microsecond, as Listing.Next keeps them.
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
		return Cursor{}, fmt.Errorf("%w: cursor %q", ErrInvalid, s)
	}
	us, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || id == "" {
		return Cursor{}, fmt.Errorf("%w: cursor %q", ErrInvalid, s)
	}
	return Cursor{Updated: time.UnixMicro(n).UTC(), ID: id}, nil
}

// Follows reports whether a record updated at updated with id comes
// after c in List's order (updated_at desc, id desc): on a page after c's.
func (c Cursor) Follows(updated time.Time, id string) bool {
	if u, cu := updated.UnixMicro(), c.Updated.UnixMicro(); u != cu {
		return u < cu
	}
	return id < c.ID
}
