// Package drivetest is a team's go test over its runtime's driver, as
// net/http/httptest is over a handler: the helpers that take package
// testing's types live here, so that package drive, which a program links
// to drive a runtime, links neither testing nor anything else it does not
// need.
//
//	func TestRuntime(t *testing.T) { drivetest.Test(t, "./myrt-driver") }
//	func FuzzRuntime(f *testing.F) { drivetest.Fuzz(f, "./myrt-driver") }
//
// Test runs generated programs on the driver and fails with the first
// failure, shrunk, as a calls file; Fuzz hands Go's fuzzing engine the
// flat program decoder (package properties/flat) as its input language.
// FuzzCRuntime, in fuzz_cruntime_test.go, is the example target over
// examples/cruntime, built for ClusterFuzzLite too.
package drivetest
