package codec

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

// marshal is deterministic so equal messages give equal bytes.
var marshal = proto.MarshalOptions{Deterministic: true}

// Messages encodes msgs, the history entries from index from on.
func Messages(msgs []*eventsv1.Message, from int) ([][]byte, error) {
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		b, err := Message(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", from+i, err)
		}
		out[i] = b
	}
	return out, nil
}

// Message encodes one history entry.
func Message(m *eventsv1.Message) ([]byte, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil message", store.ErrInvalid)
	}
	b, err := marshal.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if b == nil {
		b = []byte{} // an empty message is not SQL NULL
	}
	return b, nil
}

// DecodeMessage decodes one stored history entry.
func DecodeMessage(b []byte) (*eventsv1.Message, error) {
	m := new(eventsv1.Message)
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("store: decoding a stored message: %w", err)
	}
	return m, nil
}
