// Package emulatortest gives tests real DynamoDB and SQS: one emulator stack
// (package emulator) per test process, started on first use, and fresh,
// uniquely named resources for every New, so parallel tests never share state.
// Import it only from _test files.
//
//	func TestMain(m *testing.M) { emulatortest.Main(m) }
//
//	func TestClaim(t *testing.T) {
//		t.Parallel()
//		env := emulatortest.New(t)
//		s := store.New(env.DynamoDB, env.Resources.Table)
//		...
//	}
//
// New sets the standard AWS_ENDPOINT_URL_* variables in the test process, so
// clients built by the code under test with config.LoadDefaultConfig reach
// the emulators too. If the emulators cannot start, New fails the test with
// their output: these tests must run in CI, never skip. `make setup` installs
// them.
//
// Main stops the stack after the tests. With goleak, use Run instead:
//
//	func TestMain(m *testing.M) {
//		code := emulatortest.Run(m)
//		if code == 0 {
//			if err := goleak.Find(); err != nil {
//				fmt.Fprintln(os.Stderr, err)
//				code = 1
//			}
//		}
//		os.Exit(code)
//	}
//
// A test process that dies without reaching the end of Main (a panic, a
// timeout, Ctrl-C) still leaves no emulator behind: see package emulator.
package emulatortest
