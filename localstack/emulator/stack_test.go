package emulator

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parleyhq/parley/localstack/syncbuf"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"go.uber.org/goleak"

	"github.com/parleyhq/parley/shared/resources"
)

// startTimeout is generous: on a loaded 2-core CI machine several JVMs start
// at once.
const startTimeout = 90 * time.Second

// envMu serializes use of the process-wide environment. The SDK reads
// AWS_ENDPOINT_URL_<SERVICE> when a client is created (NewFromConfig), so a
// stack's clients, including those Provision makes, are created while its
// environment is set.
var envMu sync.Mutex

// stackClients reaches a stack the way Parley's code does: through the
// standard environment variables and config.LoadDefaultConfig.
type stackClients struct {
	cfg aws.Config
	db  *dynamodb.Client
	q   *sqs.Client
}

func connect(t *testing.T, s *Stack) stackClients {
	t.Helper()
	envMu.Lock()
	defer envMu.Unlock()
	if err := s.Setenv(); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return stackClients{cfg: cfg, db: dynamodb.NewFromConfig(cfg), q: sqs.NewFromConfig(cfg)}
}

func provision(t *testing.T, s *Stack, c stackClients, prefix string) Resources {
	t.Helper()
	envMu.Lock()
	defer envMu.Unlock()
	if err := s.Setenv(); err != nil {
		t.Fatal(err)
	}
	res, err := Provision(t.Context(), c.cfg, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestStartWithoutInstallSaysSo(t *testing.T) {
	_, err := Start(t.Context(), Options{NPMDir: t.TempDir()})
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Start with an empty NPMDir: err = %v, want ErrNotInstalled", err)
	}
	_, err = Start(t.Context(), Options{Java: "no-such-java-here"})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "no-such-java-here") {
		t.Fatalf("Start with a missing java: err = %v, want ErrNotInstalled naming it", err)
	}
}

// A failing emulator's output ends up in the error, and Start stops the other
// one. Not parallel: it checks that this process has no children left.
func TestStartErrorCarriesTheEmulatorsOutput(t *testing.T) {
	token := "boom-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	java := filepath.Join(t.TempDir(), "java")
	script := "#!/bin/sh\necho starting\necho " + token + " >&2\nexit 3\n"
	if err := os.WriteFile(java, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Start(t.Context(), Options{Java: java, StartTimeout: startTimeout})
	if err == nil {
		s.Stop()
		t.Fatal("Start succeeded with a java that exits at once")
	}
	var se *StartError
	if !errors.As(err, &se) || se.Emulator != "dynamodb" {
		t.Fatalf("err = %v, want a *StartError for dynamodb", err)
	}
	if !strings.Contains(se.Log, token) || !strings.Contains(err.Error(), token) {
		t.Fatalf("StartError does not carry the emulator's output %q: %v", token, err)
	}
	if !errors.Is(err, errExitedEarly) {
		t.Fatalf("err = %v, want it to say the emulator exited", err)
	}
	if kids := children(t); len(kids) > 0 {
		t.Fatalf("after a failed Start, child processes %v are still running", kids)
	}
	goleak.VerifyNone(t) // the spawner, reapers and output copiers are gone too
}

func TestStack(t *testing.T) {
	t.Parallel()
	// Two stacks at once, as two test processes would start them.
	stacks := make([]*Stack, 2)
	var wg sync.WaitGroup
	for i := range stacks {
		wg.Go(func() {
			s, err := Start(t.Context(), Options{StartTimeout: startTimeout})
			if err != nil {
				t.Error(err)
				return
			}
			stacks[i] = s
		})
	}
	wg.Wait()
	for _, s := range stacks {
		t.Cleanup(func() { s.Stop() })
	}
	if t.Failed() {
		t.FailNow()
	}
	a, b := stacks[0], stacks[1]

	endpoints := []string{a.DynamoDBEndpoint, a.SQSEndpoint, b.DynamoDBEndpoint, b.SQSEndpoint}
	for _, e := range endpoints {
		if !strings.HasPrefix(e, "http://127.0.0.1:") {
			t.Errorf("endpoint %q is not on 127.0.0.1", e)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(endpoints)))) != len(endpoints) {
		t.Fatalf("endpoints are not distinct: %v", endpoints)
	}
	procsA, procsB := running(t, a.PIDs()), running(t, b.PIDs())

	t.Run("FauxqsListensOnLoopbackOnly", func(t *testing.T) {
		for _, s := range stacks {
			fauxqs := s.procs[1]
			addrs := boundAddrs(t, fauxqs)
			if want := []netip.Addr{netip.MustParseAddr("127.0.0.1")}; !slices.Equal(addrs, want) {
				t.Errorf("fauxqs (pid %d) listens on %v port %d, want %v only", fauxqs.pid, addrs, fauxqs.port, want)
			}
			// From the outside, as another machine would try it.
			if ext, ok := externalAddr(t); ok {
				target := netip.AddrPortFrom(ext, uint16(fauxqs.port)).String()
				if c, err := net.DialTimeout("tcp", target, 2*time.Second); err == nil {
					c.Close()
					t.Errorf("fauxqs answers on %s, a non-loopback address", target)
				}
			}
		}
	})

	t.Run("DynamoDBLocalListensOnAllInterfaces", func(t *testing.T) {
		// DynamoDB Local has no option to bind one address (see doc.go). This
		// checks that doc.go and localstack/README.md still say what is true:
		// if it fails because the jar learnt to bind loopback, use that and
		// update both.
		for _, s := range stacks {
			ddb := s.procs[0]
			addrs := boundAddrs(t, ddb)
			if len(addrs) == 0 || slices.ContainsFunc(addrs, func(a netip.Addr) bool { return !a.IsUnspecified() }) {
				t.Errorf("DynamoDB Local (pid %d) listens on %v port %d, want the wildcard address (0.0.0.0 or ::)", ddb.pid, addrs, ddb.port)
			}
			if ext, ok := externalAddr(t); ok {
				// Logged, not asserted: a host firewall (the mitigation the
				// docs suggest) may refuse it.
				target := netip.AddrPortFrom(ext, uint16(ddb.port)).String()
				c, err := net.DialTimeout("tcp", target, 2*time.Second)
				if err == nil {
					c.Close()
				}
				t.Logf("DynamoDB Local listens on %v port %d; connect to %s: err = %v", addrs, ddb.port, target, err)
			}
		}
	})

	ca, cb := connect(t, a), connect(t, b)
	ctx := t.Context()
	res := provision(t, a, ca, "a")
	dbA, qA := ca.db, ca.q

	t.Run("Names", func(t *testing.T) {
		if want := "a-" + resources.Table.Name; res.Table != want {
			t.Errorf("Table = %q, want %q", res.Table, want)
		}
		for url, name := range map[string]string{
			res.InboundURL: "a-inbound.fifo", res.InboundDLQURL: "a-inbound-dlq.fifo",
			res.OutboundURL: "a-outbound.fifo", res.OutboundDLQURL: "a-outbound-dlq.fifo",
		} {
			if !strings.HasSuffix(url, "/"+name) {
				t.Errorf("queue URL %q does not end in /%s", url, name)
			}
		}
		env := strings.Join(res.Env(), "\n")
		for _, want := range []string{
			resources.EnvTable + "=" + res.Table,
			resources.EnvInboundQueueURL + "=" + res.InboundURL,
			resources.EnvOutboundQueueURL + "=" + res.OutboundURL,
		} {
			if !strings.Contains(env, want) {
				t.Errorf("Resources.Env() lacks %s:\n%s", want, env)
			}
		}
	})

	t.Run("ConditionalPut", func(t *testing.T) {
		put := &dynamodb.PutItemInput{
			TableName:           aws.String(res.Table),
			Item:                map[string]dbtypes.AttributeValue{resources.Table.PartitionKey.Name: &dbtypes.AttributeValueMemberS{Value: "evt#1"}},
			ConditionExpression: aws.String("attribute_not_exists(#pk)"),
			ExpressionAttributeNames: map[string]string{
				"#pk": resources.Table.PartitionKey.Name,
			},
		}
		if _, err := dbA.PutItem(ctx, put); err != nil {
			t.Fatalf("first conditional put: %v", err)
		}
		_, err := dbA.PutItem(ctx, put)
		var conflict *dbtypes.ConditionalCheckFailedException
		if !errors.As(err, &conflict) {
			t.Fatalf("second conditional put: err = %v, want ConditionalCheckFailedException", err)
		}
	})

	t.Run("TableMatchesDeclaration", func(t *testing.T) {
		ttl, err := dbA.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(res.Table)})
		if err != nil {
			t.Fatal(err)
		}
		if d := ttl.TimeToLiveDescription; d.TimeToLiveStatus != dbtypes.TimeToLiveStatusEnabled || aws.ToString(d.AttributeName) != resources.Table.TTLAttribute {
			t.Errorf("TTL = %s on %q, want ENABLED on %q", d.TimeToLiveStatus, aws.ToString(d.AttributeName), resources.Table.TTLAttribute)
		}
		out, err := dbA.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(res.Table)})
		if err != nil {
			t.Fatal(err)
		}
		tbl := out.Table
		if tbl.TableStatus != dbtypes.TableStatusActive {
			t.Errorf("table status %s, want ACTIVE", tbl.TableStatus)
		}
		if tbl.BillingModeSummary == nil || tbl.BillingModeSummary.BillingMode != dbtypes.BillingModePayPerRequest {
			t.Errorf("billing mode %+v, want PAY_PER_REQUEST", tbl.BillingModeSummary)
		}
		if got, want := keys(tbl.KeySchema), resources.Table.PartitionKey.Name+"/HASH"; got != want {
			t.Errorf("table keys %s, want %s", got, want)
		}
		if len(tbl.GlobalSecondaryIndexes) != len(resources.Table.Indexes) {
			t.Fatalf("table has %d GSIs, want %d", len(tbl.GlobalSecondaryIndexes), len(resources.Table.Indexes))
		}
		for _, want := range resources.Table.Indexes {
			i := slices.IndexFunc(tbl.GlobalSecondaryIndexes, func(g dbtypes.GlobalSecondaryIndexDescription) bool {
				return aws.ToString(g.IndexName) == want.Name
			})
			if i < 0 {
				t.Errorf("GSI %s missing", want.Name)
				continue
			}
			g := tbl.GlobalSecondaryIndexes[i]
			if got, wantKeys := keys(g.KeySchema), want.PartitionKey.Name+"/HASH "+want.SortKey.Name+"/RANGE"; got != wantKeys {
				t.Errorf("GSI %s keys %s, want %s", want.Name, got, wantKeys)
			}
			if g.Projection == nil || string(g.Projection.ProjectionType) != string(want.Projection) {
				t.Errorf("GSI %s projection %+v, want %s", want.Name, g.Projection, want.Projection)
			}
			if g.IndexStatus != dbtypes.IndexStatusActive {
				t.Errorf("GSI %s status %s, want ACTIVE", want.Name, g.IndexStatus)
			}
		}
		// The GSI answers a query on its keys.
		ix := resources.Table.Indexes[0]
		item := map[string]dbtypes.AttributeValue{
			resources.Table.PartitionKey.Name: &dbtypes.AttributeValueMemberS{Value: "int#1"},
			ix.PartitionKey.Name:              &dbtypes.AttributeValueMemberS{Value: "unknown_after_send"},
			ix.SortKey.Name:                   &dbtypes.AttributeValueMemberS{Value: "2026-01-01T00:00:00Z"},
		}
		if _, err := dbA.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(res.Table), Item: item}); err != nil {
			t.Fatal(err)
		}
		q, err := dbA.Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(res.Table), IndexName: aws.String(ix.Name),
			KeyConditionExpression:    aws.String("#k = :v"),
			ExpressionAttributeNames:  map[string]string{"#k": ix.PartitionKey.Name},
			ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":v": &dbtypes.AttributeValueMemberS{Value: "unknown_after_send"}},
		})
		if err != nil || q.Count != 1 {
			t.Fatalf("query GSI %s: count %v, err %v; want 1 item", ix.Name, q, err)
		}
	})

	t.Run("QueuesMatchDeclaration", func(t *testing.T) {
		for _, spec := range resources.Queues() {
			url, dlqURL := res.QueueURLs[spec.Name], res.QueueURLs[spec.DLQName()]
			attrs := queueAttributes(t, qA, url)
			dlq := queueAttributes(t, qA, dlqURL)
			for name, got := range map[string]map[string]string{spec.Name: attrs, spec.DLQName(): dlq} {
				if got["FifoQueue"] != "true" {
					t.Errorf("%s: FifoQueue = %q, want true", name, got["FifoQueue"])
				}
				if got["ContentBasedDeduplication"] != strconv.FormatBool(resources.ContentBasedDeduplication) {
					t.Errorf("%s: ContentBasedDeduplication = %q, want %v", name, got["ContentBasedDeduplication"], resources.ContentBasedDeduplication)
				}
				if got["MaximumMessageSize"] != strconv.Itoa(spec.MaxMessageBytes) {
					t.Errorf("%s: MaximumMessageSize = %q, want %d", name, got["MaximumMessageSize"], spec.MaxMessageBytes)
				}
			}
			if got, want := attrs["VisibilityTimeout"], seconds(spec.VisibilityTimeout); got != want {
				t.Errorf("%s: VisibilityTimeout = %q, want %s", spec.Name, got, want)
			}
			if got, want := attrs["MessageRetentionPeriod"], seconds(spec.Retention); got != want {
				t.Errorf("%s: MessageRetentionPeriod = %q, want %s", spec.Name, got, want)
			}
			if got, want := dlq["MessageRetentionPeriod"], seconds(spec.DLQRetention); got != want {
				t.Errorf("%s: MessageRetentionPeriod = %q, want %s", spec.DLQName(), got, want)
			}
			var policy struct {
				DeadLetterTargetArn string
				MaxReceiveCount     json.Number // SQS documents it as a string, returns a number
			}
			if err := json.Unmarshal([]byte(strings.Replace(attrs["RedrivePolicy"], `"maxReceiveCount":"`, `"maxReceiveCount":`, 1)), &policy); err != nil {
				t.Fatalf("%s: RedrivePolicy %q: %v", spec.Name, attrs["RedrivePolicy"], err)
			}
			if policy.DeadLetterTargetArn != dlq["QueueArn"] || policy.MaxReceiveCount.String() != strconv.Itoa(spec.MaxReceiveCount) {
				t.Errorf("%s: RedrivePolicy %s, want DLQ %s after %d receives", spec.Name, attrs["RedrivePolicy"], dlq["QueueArn"], spec.MaxReceiveCount)
			}
		}
	})

	t.Run("SendReceiveOnAGroup", func(t *testing.T) {
		for i, body := range []string{"first", "second"} {
			_, err := qA.SendMessage(ctx, &sqs.SendMessageInput{
				QueueUrl: aws.String(res.InboundURL), MessageBody: aws.String(body),
				MessageGroupId: aws.String("thread-1"), MessageDeduplicationId: aws.String("evt-" + strconv.Itoa(i)),
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, want := range []string{"first", "second"} {
			out, err := qA.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
				QueueUrl: aws.String(res.InboundURL), MaxNumberOfMessages: 1, WaitTimeSeconds: 1,
				MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameMessageGroupId},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != want {
				t.Fatalf("received %+v, want one message %q", out.Messages, want)
			}
			m := out.Messages[0]
			if g := m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)]; g != "thread-1" {
				t.Errorf("MessageGroupId = %q, want thread-1", g)
			}
			if _, err := qA.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(res.InboundURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("StacksShareNoState", func(t *testing.T) {
		dbB, qB := cb.db, cb.q
		tables, err := dbB.ListTables(ctx, &dynamodb.ListTablesInput{})
		if err != nil {
			t.Fatal(err)
		}
		queues, err := qB.ListQueues(ctx, &sqs.ListQueuesInput{})
		if err != nil {
			t.Fatal(err)
		}
		if len(tables.TableNames) != 0 || len(queues.QueueUrls) != 0 {
			t.Fatalf("stack b sees tables %v and queues %v created in stack a", tables.TableNames, queues.QueueUrls)
		}
		// The same names again: a shared table would fail with ResourceInUse.
		provision(t, b, cb, "a")
	})

	t.Run("CrashIsReported", func(t *testing.T) {
		select {
		case <-b.Done():
			t.Fatal("Done closed while both emulators run")
		default:
		}
		sqsPID := b.PIDs()[1]
		if err := syscall.Kill(sqsPID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {
		case <-b.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("Done not closed 10s after fauxqs was killed")
		}
		var exit *ExitError
		if err := b.Err(); !errors.As(err, &exit) || exit.Emulator != "sqs" || exit.PID != sqsPID {
			t.Fatalf("Err() = %v, want an *ExitError for sqs pid %d", err, sqsPID)
		}
		if err := b.Stop(); err != nil {
			t.Fatal(err)
		}
		assertGone(t, procsB)
	})

	t.Run("StopEndsBothProcesses", func(t *testing.T) {
		if err := a.Stop(); err != nil {
			t.Fatal(err)
		}
		assertGone(t, procsA)
		if err := a.Stop(); err != nil {
			t.Fatalf("second Stop: %v", err)
		}
		select {
		case <-a.Done():
		default:
			t.Fatal("Done not closed after Stop")
		}
		if err := a.Err(); err != nil {
			t.Fatalf("Err() after Stop = %v, want nil", err)
		}
	})
}

func TestStartCancelledStopsWhatItStarted(t *testing.T) {
	t.Parallel()
	// fauxqs answers within a second; DynamoDB Local takes longer: cancel in
	// between, once fauxqs is surely running.
	var log syncbuf.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		s, err := Start(ctx, Options{Log: &log})
		if s != nil {
			s.Stop()
		}
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Start after cancel: err = %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Start did not return 20s after its context was cancelled")
	}
}

func queueAttributes(t *testing.T, c *sqs.Client, url string) map[string]string {
	t.Helper()
	out, err := c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes
}

func keys(ks []dbtypes.KeySchemaElement) string {
	var parts []string
	for _, k := range ks {
		parts = append(parts, aws.ToString(k.AttributeName)+"/"+string(k.KeyType))
	}
	return strings.Join(parts, " ")
}

// boundAddrs returns the local addresses p's listening sockets on its port are
// bound to; it skips the test where that cannot be looked up.
func boundAddrs(t *testing.T, p *process) []netip.Addr {
	t.Helper()
	addrs, err := listenAddrs(p.pid, p.port)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("listening addresses are read from /proc (Linux only)")
	}
	if err != nil {
		t.Fatal(err)
	}
	return addrs
}

// externalAddr returns an address of this machine other than loopback (and
// IPv6 link-local, which needs a zone), IPv4 first, if it has one.
func externalAddr(t *testing.T) (netip.Addr, bool) {
	t.Helper()
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var found []netip.Addr
	for _, ia := range ifaddrs {
		n, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		a, ok := netip.AddrFromSlice(n.IP)
		if a = a.Unmap(); ok && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsUnspecified() {
			found = append(found, a)
		}
	}
	slices.SortStableFunc(found, func(x, y netip.Addr) int { return cmp.Compare(x.BitLen(), y.BitLen()) })
	if len(found) == 0 {
		t.Log("no non-loopback address to connect to")
		return netip.Addr{}, false
	}
	return found[0], true
}

// proc identifies a process across pid reuse: pid plus start time.
type proc struct {
	pid   int
	start string
}

// procState returns pid's state letter and start time from /proc/PID/stat.
func procState(pid int) (state, start string, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", "", false
	}
	// pid (comm) state ppid ... field 22 is starttime; comm may hold spaces.
	rest := string(data[bytes.LastIndexByte(data, ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 20 {
		return "", "", false
	}
	return f[0], f[19], true
}

// alive reports whether p still runs: same pid and start time, not a zombie.
// (An orphaned emulator is reparented to PID 1, which in a container may
// never reap it; a zombie runs nothing.)
func (p proc) alive() bool {
	state, start, ok := procState(p.pid)
	return ok && start == p.start && state != "Z"
}

func running(t *testing.T, pids []int) []proc {
	t.Helper()
	var ps []proc
	for _, pid := range pids {
		state, start, ok := procState(pid)
		if !ok || state == "Z" {
			t.Fatalf("pid %d is not running", pid)
		}
		ps = append(ps, proc{pid, start})
	}
	return ps
}

// assertGone waits a few seconds for every process to be gone.
func assertGone(t *testing.T, ps []proc) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []int
		for _, p := range ps {
			if p.alive() {
				left = append(left, p.pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("emulator processes %v still running", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// children lists this process's running (non-zombie) child processes.
func children(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var kids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
		if len(f) > 1 && f[1] == self && f[0] != "Z" {
			kids = append(kids, pid)
		}
	}
	return kids
}

// BenchmarkProvision measures what each emulatortest.New costs once the
// stack runs: one table and four queues.
func BenchmarkProvision(b *testing.B) {
	s, err := Start(b.Context(), Options{StartTimeout: startTimeout})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	if err := s.Setenv(); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.LoadDefaultConfig(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		n++
		if _, err := Provision(b.Context(), cfg, "bench-"+strconv.Itoa(n)); err != nil {
			b.Fatal(err)
		}
	}
}
