//go:build !race

package e2e

// raceEnabled: the race detector is on (timing bounds are looser).
const raceEnabled = false
