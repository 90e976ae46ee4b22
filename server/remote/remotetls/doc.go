// Package remotetls makes the protoactor remote options that put TLS on
// both directions of a remote link, mutual when a peer CA is given. It
// serves `tack node` (--tls-cert, --tls-key, --tls-client-ca) and the
// programs that call a node (examples/remote).
//
// protoactor's remote is gRPC in both directions: a caller dials the
// node's endpoint to send, and the node dials the caller's own endpoint
// to answer and to deliver events. So each side both serves and dials,
// and each needs a certificate and key, which it presents as server and
// as client; with a peer CA, each side accepts only peers whose
// certificate that CA signed, whichever of the two dialled.
package remotetls
