package command

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events/eventjson"
)

// Header is the part of a command object that is not the command's own
// fields: cmd, id and session. The JSON-lines server and the WebSocket
// read commands in this shape.
type Header struct {
	// Cmd is the command's name.
	Cmd string
	// ID is the id as the client wrote it (any JSON value), echoed in the
	// response; nil when the command has none. Parse makes it text a
	// client can read: invalid UTF-8 in its strings becomes U+FFFD, and a
	// number past a float64's range is a bad_request, with no id.
	ID json.RawMessage
	// Session is the session the command is about, "" when it names none.
	Session string
}

// Parse reads one command object: its header, and the command's own
// fields (what RunObject takes). An error is bad_request; the header
// holds what could be read before it (the id, for the response).
func Parse(line []byte) (Header, map[string]json.RawMessage, error) {
	obj, err := eventjson.ParseObject(line)
	if err != nil {
		return Header{}, nil, badRequest(err.Error())
	}
	h, err := takeHeader(obj)
	return h, obj, err
}

// takeHeader reads cmd, id and session from a command's object and takes
// them off it: what is left are the command's own fields.
func takeHeader(obj map[string]json.RawMessage) (Header, error) {
	var h Header
	var idErr error
	if raw, ok := obj["id"]; ok && string(raw) != "null" {
		h.ID, idErr = echoID(raw)
	}
	delete(obj, "id")
	raw, ok := obj["cmd"]
	if !ok || string(raw) == "null" {
		return h, badRequest(`a command needs "cmd"`)
	}
	if json.Unmarshal(raw, &h.Cmd) != nil {
		return h, badRequest(`field "cmd": expected a string`)
	}
	delete(obj, "cmd")
	if raw, ok := obj["session"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &h.Session) != nil {
			return h, badRequest(`field "session": expected a string`)
		}
	}
	delete(obj, "session")
	return h, idErr
}

// echoID returns what a response echoes for raw, the id of a command
// line, which is valid JSON but may not be text a client can read back:
// raw itself, byte for byte, when it is; the same value with each
// invalid UTF-8 sequence replaced by U+FFFD, as encoding/json reads it,
// when raw is not UTF-8 (a WebSocket client fails on a text frame that
// is not); and a bad_request (and no id) when it holds a number past a
// float64's range, such as 1e999, which encoding/json cannot read.
func echoID(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) { // not reached: the line was read as JSON
			return nil, badRequest(`field "id": ` + err.Error())
		}
		num := strings.TrimPrefix(te.Value, "number ")
		if len(num) > 40 {
			num = num[:40] + "…"
		}
		return nil, badRequest(`field "id": number ` + num + ` is out of range`)
	}
	if utf8.Valid(raw) {
		return raw, nil
	}
	return json.Marshal(v)
}

// AppendResponse appends the response to the command h as one JSON
// object, without a line ending:
//
//	{"type":"response","id":"7","cmd":"steer","ok":true,"data":{"ref":"st-2"}}
//	{"type":"response","id":"8","cmd":"steer","ok":false,"error":{"code":"queue_full","message":"..."}}
//
// data is the command's data ({} when nil); a non-nil err makes it an
// error response with err's protocol code (internal for an error that is
// not a *tack.Error).
func AppendResponse(b []byte, h Header, data proto.Message, err error) []byte {
	b = append(b, `{"type":"response","id":`...)
	if len(h.ID) > 0 {
		b = append(b, h.ID...)
	} else {
		b = append(b, "null"...)
	}
	b = appendString(append(b, `,"cmd":`...), h.Cmd)
	if err != nil {
		b = append(b, `,"ok":false,"error":{"code":`...)
		b = appendString(b, tack.Code(err))
		b = appendString(append(b, `,"message":`...), errMessage(err))
		return append(b, "}}"...)
	}
	b = append(b, `,"ok":true,"data":`...)
	if data == nil {
		b = append(b, "{}"...)
	} else if b, err = eventjson.AppendMessage(b, data); err != nil {
		panic(err) // every eventsv1 message can be written
	}
	return append(b, '}')
}

// errMessage is the human part of err.
func errMessage(err error) string {
	var e *tack.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
