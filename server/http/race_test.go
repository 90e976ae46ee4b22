//go:build race

package http

// raceEnabled is true under the race detector, which slows the server
// several times over: timing bounds do not hold under it.
const raceEnabled = true
