//go:build race

package goal_test

// raceDetector: the race detector slows a long scripted goal about fivefold, so the figures
// test runs a shorter goal under it (the benchmark always runs the full 300 steps).
const raceDetector = true
