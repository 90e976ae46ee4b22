package script

import (
	_ "embed"
)

//go:embed demo.json
var demoJSON []byte

// Demo returns the built-in demo script that `tack demo` plays (the model
// DemoModel): a turn that thinks, streams and lists files with shell; a
// summary; a turn that calls sleep for 3 s (to be steered); "Stopped
// waiting as you asked."; a long answer streamed slowly enough to abort;
// then it echoes. Each call returns a new Script.
func Demo() *Script {
	s, err := Parse(demoJSON)
	if err != nil {
		panic("script: the embedded demo script is invalid: " + err.Error())
	}
	return s
}
