package builtin

import (
	"errors"

	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/approval"
	"github.com/tack-run/tack/plugins/askuser"
	"github.com/tack-run/tack/plugins/limits"
	"github.com/tack-run/tack/plugins/loopdetect"
	"github.com/tack-run/tack/plugins/offload"
)

// factories are the built-ins by name, in their default priority order.
var factories = []struct {
	name string
	f    plugins.Factory
}{
	{askuser.Name, askuser.New},
	{limits.Name, limits.New},
	{approval.Name, approval.New},
	{loopdetect.Name, loopdetect.New},
	{offload.Name, offload.New},
}

// Register adds the built-in plugins to r. A name r holds already is an
// error; the other built-ins are still registered.
func Register(r *plugins.Registry) error {
	var errs []error
	for _, b := range factories {
		errs = append(errs, r.Register(b.name, b.f))
	}
	return errors.Join(errs...)
}
