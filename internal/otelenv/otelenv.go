package otelenv

import (
	"fmt"
	"os"

	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Signals, as they appear in the variables' names.
const (
	Traces  = "TRACES"
	Metrics = "METRICS"
)

// Protocols of OTEL_EXPORTER_OTLP_PROTOCOL that Tack exports with.
const (
	HTTPProtobuf = "http/protobuf"
	GRPC         = "grpc"
)

// DefaultServiceName names the service when OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) does not.
const DefaultServiceName = "tack"

// On reports whether signal is to be exported: OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_<signal>_ENDPOINT is set.
func On(signal string) bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""
}

// Protocol is the protocol signal is exported with:
// OTEL_EXPORTER_OTLP_<signal>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else http/protobuf. Another value than HTTPProtobuf or GRPC is an error
// naming it.
func Protocol(signal string) (string, error) {
	name := "OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"
	p := os.Getenv(name)
	if p == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
		p = os.Getenv(name)
	}
	switch p {
	case "", HTTPProtobuf:
		return HTTPProtobuf, nil
	case GRPC:
		return GRPC, nil
	}
	return "", fmt.Errorf("%s is %s or %s, not %q", name, HTTPProtobuf, GRPC, p)
}

// Resource is the resource of what Tack exports: service.name
// DefaultServiceName, overridden by OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES.
func Resource() (*resource.Resource, error) {
	return resource.Merge(resource.NewSchemaless(semconv.ServiceName(DefaultServiceName)), resource.Environment())
}
