//go:build !race

package goal_test

// raceDetector: see race_on_test.go.
const raceDetector = false
