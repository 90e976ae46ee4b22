package codec

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/internal/storepb"
)

// idle is the state a record stores as none: the state of most sessions.
const idle = "idle"

// EncodeRecord encodes r with vol, its volatile state as EncodeVolatile
// made it, in the memory store's form (storepb.Record): everything but
// r.ID, r.Config, r.MessageCount and r.UpdatedAt, which that store keeps
// beside it. An idle session that never ran takes a dozen bytes.
func EncodeRecord(r *store.Session, vol []byte) ([]byte, error) {
	pb := storepb.Record{
		HistoryStart:         int64(r.HistoryStart),
		Title:                r.Title,
		EventSeq:             r.EventSeq,
		Owner:                r.Owner,
		LeaseExpiresUnixNano: unixNano(r.LeaseExpires),
		CreatedUnixMicro:     r.CreatedAt.UnixMicro(),
		Volatile:             vol,
	}
	if r.State != idle {
		pb.State = r.State
	}
	if proto.Size(r.Usage) > 0 {
		pb.Usage = r.Usage
	}
	b, err := marshal.Marshal(&pb)
	if err != nil {
		return nil, fmt.Errorf("%w: session record: %v", store.ErrInvalid, err)
	}
	return b, nil
}

// DecodeRecord decodes what EncodeRecord made: the record, without its ID,
// Config, MessageCount and UpdatedAt, and the encoded volatile state. The result
// shares nothing with b.
func DecodeRecord(b []byte) (store.Session, []byte, error) {
	var pb storepb.Record
	if err := proto.Unmarshal(b, &pb); err != nil {
		return store.Session{}, nil, fmt.Errorf("store: decoding a stored session record: %w", err)
	}
	r := store.Session{
		State:        pb.State,
		HistoryStart: int(pb.HistoryStart),
		Title:        pb.Title,
		Usage:        pb.Usage,
		EventSeq:     pb.EventSeq,
		Owner:        pb.Owner,
		LeaseExpires: fromUnixNano(pb.LeaseExpiresUnixNano),
		CreatedAt:    time.UnixMicro(pb.CreatedUnixMicro).UTC(),
	}
	if r.State == "" {
		r.State = idle
	}
	if r.Usage == nil {
		r.Usage = &eventsv1.Usage{}
	}
	return r, pb.Volatile, nil
}
