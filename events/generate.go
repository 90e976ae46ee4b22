package events

// Regenerate the protobuf code with protoc 3.21.12 (Debian bookworm's
// protobuf-compiler) and protoc-gen-go v1.36.12 (pinned as a tool in go.mod):
//
//go:generate sh -c "cd .. && protoc --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --go_out=. --go_opt=paths=source_relative events/v1/events.proto events/v1/commands.proto"
