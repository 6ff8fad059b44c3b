// Package emulator runs Parley's AWS dependencies on this machine without
// Docker: AWS's own DynamoDB Local (a Java jar) and fauxqs (an SQS emulator
// on Node.js), both installed into localstack/_npm by localstack/setup.sh
// (`make setup`). Tests use it through package emulatortest; the local runner
// uses it directly.
//
// # Model
//
// Start launches both emulators on free ports and returns once each answers a
// real API call (ListTables, ListQueues). Provision creates the state
// table and the FIFO queues with their FIFO dead-letter queues exactly as
// package resources declares them, under a name prefix, so several sets can
// live side by side in one emulator. Env and Resources.Env are the environment
// a process needs; nothing else is needed, because Parley's code reaches the
// emulators only through the SDK's standard AWS_ENDPOINT_URL_DYNAMODB and
// AWS_ENDPOINT_URL_SQS variables:
//
//	stack, err := emulator.Start(ctx, emulator.Options{})
//	if err != nil {
//		return err // a *StartError carries the emulator's last output
//	}
//	defer stack.Stop()
//	if err := stack.Setenv(); err != nil { // or pass stack.Env() to a child
//		return err
//	}
//	cfg, err := config.LoadDefaultConfig(ctx) // picks up AWS_ENDPOINT_URL_*
//	if err != nil {
//		return err
//	}
//	res, err := emulator.Provision(ctx, cfg, "dev")
//	if err != nil {
//		return err
//	}
//	cmd.Env = append(append(os.Environ(), stack.Env()...), res.Env()...)
//
// # Process lifetime
//
// The emulators never outlive the process that started them. Each runs in its
// own process group, which Stop signals (SIGTERM, then SIGKILL after
// Options.StopGrace). If the process dies without calling Stop (SIGKILL, an
// unhandled SIGINT, a panic, a test timeout), the kernel kills the emulators:
// they are started with a parent-death signal (SIGKILL) from an OS thread that
// stays alive as long as they do. (Linux sends that signal when the creating
// thread exits, not the process, see https://go.dev/issue/27505: a thread
// locked to a goroutine that outlives the children makes it reliable.)
//
// The package installs no signal handlers. A runner that wants a graceful stop
// calls Stop from its own handler (for example after signal.NotifyContext's
// context ends); Stop is safe to call concurrently and more than once, and a
// Start whose context is cancelled cleans up what it had started. Done and Err
// tell a runner that an emulator exited on its own.
//
// # Details
//
//   - Every endpoint this package hands out is on 127.0.0.1, and Parley only
//     ever connects to the emulators there.
//   - fauxqs listens on 127.0.0.1 only. Its own startFauxqs (and its CLI)
//     listens on 0.0.0.0 whatever FAUXQS_HOST says, so node runs a small
//     launcher instead, fauxqs.mjs (embedded, passed with --eval), which
//     builds the same app with fauxqs's exported buildApp and listens on
//     loopback.
//   - DynamoDB Local listens on all interfaces (its socket is bound to the
//     wildcard address, :: or 0.0.0.0): its jar has no option to bind one
//     address (-help lists only -port, -inMemory, -dbPath, -sharedDb, -cors,
//     -delayTransientStatuses, -optimizeDbBeforeStartup, -disableTelemetry,
//     -version and -help, and the jar builds its Jetty server from the port
//     alone). It does so on a random high port (one the kernel picks from its
//     ephemeral range) for as long as the Stack runs: the life of the test
//     process, or of `make run`. It verifies no credentials, so while it runs
//     anyone who can reach this machine on that port can read and change its
//     tables. To close that, have a host firewall refuse inbound connections
//     from other machines (ufw's default "deny incoming" policy does, and
//     still accepts loopback traffic).
//   - Ports are picked free, and Start checks that the process answering on a
//     port is its own (via /proc), so parallel test processes never share an
//     emulator; a lost race for a port is retried on another.
//   - DynamoDB Local runs in memory with -sharedDb: one database whatever the
//     credentials and region, so a developer's own tools see the same tables.
//   - fauxqs runs with request logging off; its queue URLs look like
//     http://sqs.us-east-1.localhost:PORT/000000000000/NAME. The SDK sends every
//     request to AWS_ENDPOINT_URL_SQS whatever the URL's host, as it does in AWS.
//
// Linux is the supported platform; on other Unix systems the parent-death
// signal and the port-ownership check are unavailable and skipped.
package emulator
