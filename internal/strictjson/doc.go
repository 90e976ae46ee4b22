// Package strictjson decodes JSON into Go values and rejects keys that
// name no field, at any depth, with an error that says where:
// `unknown field "delay" in turns[0]`. The scripted model's scripts and
// the plugins' configurations are read with it, so that a misspelt
// option is an error rather than silently nothing, in the same words
// the events package uses for commands.
//
// # Usage
//
//	var s Script
//	err := strictjson.Decode(data, &s)
//
// Keys match json tags exactly (encoding/json alone would also take
// "Text" for "text"). Values whose type decodes itself (json.Unmarshaler,
// json.RawMessage) are not looked into.
//
// # Concurrency
//
// Decode keeps no state; call it from any goroutine.
package strictjson
