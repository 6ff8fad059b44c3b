package coldstart_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/fakeplatform/fakegooglechat"
	"github.com/parleyhq/parley/localstack/fakeplatform/faketeams"
	"github.com/parleyhq/parley/localstack/syncbuf"
)

// consumers are the functions not behind a Function URL, and the event each
// is first invoked with: an empty batch for the queue consumers, a
// scheduled event for the sweeper. Every other function under functions/ is
// a webhook, invoked with a Function URL request (refused for its
// signature: the init is what is measured).
var consumers = map[string]string{
	"turn": `{"Records":[]}`, "delivery": `{"Records":[]}`,
	"sweeper": `{"version":"0","id":"cold","detail-type":"Scheduled Event","source":"aws.events","time":"2026-01-01T00:00:00Z","detail":{}}`,
}

// functionNames are the commands under functions/, sorted.
func functionNames(tb testing.TB) []string {
	tb.Helper()
	entries, err := os.ReadDir("../../functions")
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) < 10 {
		tb.Fatalf("functions/ holds %v; want every function", names)
	}
	return names
}

// eventFor is the first event function n is invoked with.
func eventFor(n string) string {
	if e, ok := consumers[n]; ok {
		return e
	}
	return urlEvent
}

const urlEvent = `{"version":"2.0","rawPath":"/","headers":{"content-type":"application/json"},` +
	`"requestContext":{"http":{"method":"POST","path":"/"}},"body":"{}","isBase64Encoded":false}`

// env configures every function as a deployment would, with every value in
// the environment: nothing is read over the network at init. The endpoints
// point nowhere; nothing is called before the first event.
var env = []string{
	"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=cold", "AWS_SECRET_ACCESS_KEY=cold",
	"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256", "AWS_LAMBDA_FUNCTION_TIMEOUT=30",
	"AWS_ENDPOINT_URL=http://127.0.0.1:9",
	"PARLEY_TABLE=cold-State",
	"PARLEY_INBOUND_QUEUE_URL=http://127.0.0.1:9/q/inbound.fifo", "PARLEY_INBOUND_DLQ_URL=http://127.0.0.1:9/q/inbound-dlq.fifo",
	"PARLEY_OUTBOUND_QUEUE_URL=http://127.0.0.1:9/q/outbound.fifo", "PARLEY_OUTBOUND_DLQ_URL=http://127.0.0.1:9/q/outbound-dlq.fifo",
	"PARLEY_AGENT_URL=http://127.0.0.1:9/agent", "PARLEY_AGENT_SECRET=whsec_Y29sZHN0YXJ0Y29sZHN0YXJ0Y29sZHN0YXJ0",
	"TELEGRAM_BOT_TOKEN=7000000001:cold", "TELEGRAM_WEBHOOK_SECRET=cold-secret",
	"SLACK_BOT_TOKEN=xoxb-cold", "SLACK_SIGNING_SECRET=cold-secret",
	"DISCORD_PUBLIC_KEY=" + strings.Repeat("ab", 32), "DISCORD_APPLICATION_ID=1", "DISCORD_BOT_TOKEN=cold",
	"LINE_CHANNEL_SECRET=cold-secret", "LINE_CHANNEL_ACCESS_TOKEN=cold",
	"WHATSAPP_APP_SECRET=cold-secret", "WHATSAPP_ACCESS_TOKEN=cold", "WHATSAPP_VERIFY_TOKEN=cold", "WHATSAPP_PHONE_NUMBER_ID=1",
	"PARLEY_EVENTS_SECRET=whsec_Y29sZHN0YXJ0Y29sZHN0YXJ0Y29sZHN0YXJ0",
	"PARLEY_REPLY_SECRET=whsec_Y29sZHN0YXJ0Y29sZHN0YXJ0Y29sZHN0YXJ0",
	"TEAMS_APP_ID=" + faketeams.AppID, "TEAMS_TENANT_ID=" + faketeams.TenantID, "TEAMS_APP_PASSWORD=cold",
	"GOOGLECHAT_PROJECT_NUMBER=" + fakegooglechat.ProjectNumber,
	"GOOGLECHAT_SERVICE_ACCOUNT=" + fakegooglechat.ServiceAccountJSON("http://127.0.0.1:9/token"),
}

// BenchmarkColdStart starts each function and two references under the
// emulator, in turn, once per iteration: the baseline, testdata/sdk, what a
// user would write (the SDK's default configuration, and DynamoDB, SQS and
// Secrets Manager clients built at init), and an aws-lambda-go hello world.
// It reports per function the init duration's median ÷ the baseline's
// (init-ratio), the median peak RSS in MB (rss-MB), and the size in MiB of
// the bootstrap as make build makes it for Lambda (linux/arm64, -tags
// lambda.norpc, -s -w); and the references' medians in ms, with the
// baseline's ÷ the hello world's.
func BenchmarkColdStart(b *testing.B) {
	dir := b.TempDir()
	rie := filepath.Join(dir, "aws-lambda-rie")
	build(b, dir, "rie", "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie", rie)
	names := functionNames(b)
	refs := []string{"hello", "sdk"}
	bins := map[string]string{}
	for _, r := range refs {
		bins[r] = filepath.Join(dir, r, "bootstrap")
		build(b, dir, r, "./testdata/"+r, bins[r])
	}
	for _, n := range names {
		bins[n] = filepath.Join(dir, n, "bootstrap")
		build(b, dir, n, "../../functions/"+n, bins[n])
	}

	inits := map[string][]float64{}
	rss := map[string][]float64{}
	all := append(slices.Clone(refs), names...)
	round := 0
	for b.Loop() {
		// Each round starts one program later, so no program (the
		// baseline least of all) always runs in the same place: right
		// after the smallest binary, or first after the benchmark's own
		// work.
		order := append(slices.Clone(all[round%len(all):]), all[:round%len(all)]...)
		round++
		for _, n := range order {
			event := `{}` // the references take any event
			if !slices.Contains(refs, n) {
				event = eventFor(n)
			}
			ms, kb := coldStart(b, rie, bins[n], event)
			inits[n] = append(inits[n], ms)
			rss[n] = append(rss[n], kb/1024)
		}
	}
	hello, sdk := median(inits["hello"]), median(inits["sdk"])
	b.ReportMetric(hello, "hello-init-ms")
	b.ReportMetric(median(rss["hello"]), "hello-rss-MB")
	b.ReportMetric(sdk, "sdk-init-ms")
	b.ReportMetric(median(rss["sdk"]), "sdk-rss-MB")
	b.ReportMetric(sdk/hello, "sdk-vs-hello")
	for _, n := range names {
		ratio := median(inits[n]) / sdk
		b.ReportMetric(ratio, n+"-init-ratio")
		b.ReportMetric(median(rss[n]), n+"-rss-MB")
		size := lambdaSize(b, dir, n)
		b.ReportMetric(size, n+"-bootstrap-MiB")
	}
}

// build compiles pkg to out as Lambda runs it (for this machine's
// architecture, so it runs here).
func build(b *testing.B, dir, name, pkg, out string) {
	b.Helper()
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build %s: %v\n%s", name, err, msg)
	}
}

// lambdaSize is the size in MiB of the function's bootstrap as make build
// makes it for Lambda (linux/arm64).
func lambdaSize(b *testing.B, dir, name string) float64 {
	b.Helper()
	out := filepath.Join(dir, "arm64", name)
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, "../../functions/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build %s for arm64: %v\n%s", name, err, msg)
	}
	st, err := os.Stat(out)
	if err != nil {
		b.Fatal(err)
	}
	return float64(st.Size()) / (1 << 20)
}

var initReport = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// coldStart runs bootstrap under a fresh emulator, invokes it once, and
// returns its init duration in ms and its peak RSS in KB.
func coldStart(b *testing.B, rie, bootstrap, event string) (float64, float64) {
	b.Helper()
	addr := freeAddr(b)
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", addr, bootstrap)
	cmd.Env = env
	cmd.Dir = filepath.Dir(bootstrap)
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	url := "http://" + addr + "/2015-03-31/functions/function/invocations"
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Post(url, "application/json", strings.NewReader(event))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("emulator never answered: %v\n%s", err, out)
		}
		time.Sleep(5 * time.Millisecond)
	}
	child := childOf(cmd.Process.Pid, filepath.Base(bootstrap))
	kb := 0.0
	if child > 0 {
		kb = peakRSS(child)
	}
	for time.Now().Before(deadline) {
		if m := initReport.FindStringSubmatch(out.String()); m != nil {
			if strings.Contains(out.String(), "INIT RTDONE(status: error)") {
				b.Fatalf("%s failed its init:\n%s", bootstrap, out)
			}
			ms, _ := strconv.ParseFloat(m[1], 64)
			return ms, kb
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Fatalf("no init report:\n%s", out)
	return 0, 0
}

// childOf is the pid of pid's child process named name (0 if none).
func childOf(pid int, name string) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			c, _ := strconv.Atoi(f)
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c))
			if strings.TrimSpace(string(comm)) == name {
				return c
			}
		}
	}
	return 0
}

// peakRSS is a process's peak resident set size in KB (VmHWM).
func peakRSS(pid int) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb
		}
	}
	return 0
}

func freeAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
