package codec

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

func TestRecordRoundTrip(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)
	tests := []struct {
		name    string
		in      store.Session
		vol     []byte
		maxSize int // 0: no bound
	}{
		{name: "new idle session", in: store.Session{State: "idle", Usage: &eventsv1.Usage{}, CreatedAt: at}, maxSize: 10},
		{name: "zero usage left out", in: store.Session{State: "idle", Usage: &eventsv1.Usage{}, EventSeq: 3, CreatedAt: at},
			vol: []byte{0x38, 0x01}, maxSize: 16},
		{name: "everything", in: store.Session{State: "running", HistoryStart: 4, Title: "a title",
			Usage:    &eventsv1.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12, CostUsd: 0.5},
			EventSeq: 1 << 40, Owner: "node-1", LeaseExpires: at.Add(1500 * time.Nanosecond), CreatedAt: at},
			vol: []byte{0x0a, 0x01, 'p'}},
		{name: "created at the zero time", in: store.Session{State: "idle", Usage: &eventsv1.Usage{}}},
		{name: "created at the Unix epoch", in: store.Session{State: "idle", Usage: &eventsv1.Usage{}, CreatedAt: time.Unix(0, 0).UTC()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// What the memory store keeps beside the record is left out.
			in := tc.in
			in.ID, in.MessageCount, in.UpdatedAt = "s1", 7, at.Add(time.Hour)
			in.Config = store.Config{Model: "m", User: "u", Spec: []byte(`{}`)}
			b, err := EncodeRecord(&in, tc.vol)
			if err != nil {
				t.Fatal(err)
			}
			if tc.maxSize > 0 && len(b) > tc.maxSize {
				t.Errorf("encoded in %d bytes, want at most %d", len(b), tc.maxSize)
			}
			got, vol, err := DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			if string(vol) != string(tc.vol) {
				t.Errorf("volatile state %x, want %x", vol, tc.vol)
			}
			if !proto.Equal(got.Usage, tc.in.Usage) || got.Usage == nil {
				t.Errorf("usage %v, want %v", got.Usage, tc.in.Usage)
			}
			want := tc.in
			got.Usage, want.Usage = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestRecordRefusesInvalidText(t *testing.T) {
	if _, err := EncodeRecord(&store.Session{State: "idle", Title: "\xff"}, nil); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	if _, _, err := DecodeRecord([]byte{0xff, 0xff, 0xff}); err == nil {
		t.Fatal("decoded garbage")
	}
}
