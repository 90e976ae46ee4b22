package remotev1

// Regenerate remote.pb.go with protoc 3.21.12 and protoc-gen-go v1.36.12 (as
// for events/v1): actor.proto is protoactor-go's, from the module cache.
//
//go:generate sh -c "cd ../../.. && protoc --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) -I . -I $(go list -m -f '{{.Dir}}' github.com/asynkron/protoactor-go)/actor --go_out=. --go_opt=paths=source_relative server/remote/remotev1/remote.proto"
