//go:build race

package remote_test

// raceEnabled: timing bounds are not checked under the race detector.
const raceEnabled = true
