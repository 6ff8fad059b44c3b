package stack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/parleyhq/parley/shared/message"
	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/platform/slack"
	"github.com/parleyhq/parley/shared/platform/telegram"
	"github.com/parleyhq/parley/shared/resources"
)

func TestNagClean(t *testing.T) {
	fx := defaultFixture(t)
	for _, m := range fx.nag {
		t.Error(m)
	}
}

// The template holds what the declaration lists, no more and no less.
func TestTemplateMatchesDeclaration(t *testing.T) {
	fx := defaultFixture(t)
	var ingress, consumers, scheduled int
	for _, fn := range registry.Functions() {
		switch fn.Kind {
		case resources.Ingress:
			ingress++
		case resources.Consumer:
			consumers++
		case resources.Scheduled:
			scheduled++
		}
	}
	n := len(registry.Functions())
	want := map[string]int{
		"AWS::DynamoDB::Table":            1,
		"AWS::SQS::Queue":                 2 * len(resources.Queues()),
		"AWS::Lambda::Function":           n,
		"AWS::IAM::Role":                  n,
		"AWS::Logs::LogGroup":             n,
		"AWS::Lambda::Url":                ingress,
		"AWS::Lambda::EventSourceMapping": consumers,
		"AWS::Events::Rule":               scheduled,
		"AWS::SecretsManager::Secret":     1,
		"AWS::SNS::Topic":                 1,
		"AWS::S3::Bucket":                 1,
		"AWS::S3::BucketPolicy":           1,
		"AWS::CloudWatch::Dashboard":      1,
		// DLQ not empty + oldest message per queue; errors + throttles per
		// function; webhook 5xx per ingress function.
		"AWS::CloudWatch::Alarm": 2*len(resources.Queues()) + 2*n + ingress,
	}
	for _, typ := range sortedKeys(want) {
		if got := len(fx.resourcesOf(typ)); got != want[typ] {
			t.Errorf("%s: %d in the template, want %d", typ, got, want[typ])
		}
		must(t, func() { fx.template.ResourceCountIs(jsii.String(typ), jsii.Number(want[typ])) })
	}
}

func TestTable(t *testing.T) {
	fx := defaultFixture(t)
	spec := resources.Table
	attrs := []any{map[string]any{"AttributeName": spec.PartitionKey.Name, "AttributeType": string(spec.PartitionKey.Type)}}
	var gsis []any
	for _, ix := range spec.Indexes {
		keys := []any{map[string]any{"AttributeName": ix.PartitionKey.Name, "KeyType": "HASH"}}
		attrs = append(attrs, map[string]any{"AttributeName": ix.PartitionKey.Name, "AttributeType": string(ix.PartitionKey.Type)})
		if ix.SortKey.Name != "" {
			keys = append(keys, map[string]any{"AttributeName": ix.SortKey.Name, "KeyType": "RANGE"})
			attrs = append(attrs, map[string]any{"AttributeName": ix.SortKey.Name, "AttributeType": string(ix.SortKey.Type)})
		}
		gsis = append(gsis, map[string]any{
			"IndexName":  ix.Name,
			"KeySchema":  keys,
			"Projection": map[string]any{"ProjectionType": string(ix.Projection)},
		})
	}
	want := map[string]any{
		"KeySchema":                        []any{map[string]any{"AttributeName": spec.PartitionKey.Name, "KeyType": "HASH"}},
		"AttributeDefinitions":             assertions.Match_ArrayEquals(&attrs),
		"BillingMode":                      "PAY_PER_REQUEST",
		"TimeToLiveSpecification":          map[string]any{"AttributeName": spec.TTLAttribute, "Enabled": true},
		"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
		// AWS-managed KMS key: SSE on, no key of our own.
		"SSESpecification":       map[string]any{"SSEEnabled": true},
		"GlobalSecondaryIndexes": assertions.Match_ArrayEquals(&gsis),
	}
	must(t, func() {
		fx.template.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"Properties":          want,
			"DeletionPolicy":      "Retain",
			"UpdateReplacePolicy": "Retain",
		})
	})
}

func TestQueues(t *testing.T) {
	fx := defaultFixture(t)
	stackName := *fx.stack.Stack.StackName()
	for _, q := range resources.Queues() {
		t.Run(q.Name, func(t *testing.T) {
			mainID, dlqID := fx.logicalID(fx.stack.Queues[q.Name]), fx.logicalID(fx.stack.DLQs[q.Name])
			main, dlq := props(fx.resource(t, mainID)), props(fx.resource(t, dlqID))
			wantMain := map[string]any{
				"QueueName":                 QueueName(stackName, q.Name),
				"FifoQueue":                 true,
				"ContentBasedDeduplication": resources.ContentBasedDeduplication,
				// High-throughput FIFO: per thread, not per queue.
				"DeduplicationScope":     "messageGroup",
				"FifoThroughputLimit":    "perMessageGroupId",
				"VisibilityTimeout":      q.VisibilityTimeout.Seconds(),
				"MessageRetentionPeriod": q.Retention.Seconds(),
				"MaximumMessageSize":     q.MaxMessageBytes,
				"SqsManagedSseEnabled":   true,
				"RedrivePolicy": map[string]any{
					"deadLetterTargetArn": getAtt(dlqID, "Arn"),
					"maxReceiveCount":     q.MaxReceiveCount,
				},
			}
			if !equalJSON(main, wantMain) {
				t.Errorf("queue %s:\n got %s\nwant %s", q.Name, asJSON(main), asJSON(wantMain))
			}
			wantDLQ := map[string]any{
				"QueueName":              QueueName(stackName, q.DLQName()),
				"FifoQueue":              true, // a FIFO queue's DLQ must be FIFO too
				"MessageRetentionPeriod": q.DLQRetention.Seconds(),
				"MaximumMessageSize":     q.MaxMessageBytes,
				"SqsManagedSseEnabled":   true,
			}
			if !equalJSON(dlq, wantDLQ) {
				t.Errorf("dead-letter queue %s:\n got %s\nwant %s", q.DLQName(), asJSON(dlq), asJSON(wantDLQ))
			}
			if !strings.HasSuffix(wantDLQ["QueueName"].(string), "-dlq.fifo") {
				t.Errorf("DLQ name %s", wantDLQ["QueueName"])
			}
			// enforceSSL: each queue's policy denies requests without TLS.
			for _, id := range []string{mainID, dlqID} {
				must(t, func() {
					fx.template.HasResourceProperties(jsii.String("AWS::SQS::QueuePolicy"), map[string]any{
						"Queues": []any{ref(id)},
						"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
							"Effect":    "Deny",
							"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
						})})},
					})
				})
			}
		})
	}
}

// wantEnvironment is what fn's environment must hold: names of the resources
// it uses, where its secrets are (PARLEY_SECRETS, as wantSecrets) and its
// settings.
func wantEnvironment(t *testing.T, fx *fixture, fn resources.FunctionSpec, agentURL, secretPrefix string) map[string]any {
	env := map[string]any{
		resources.EnvTable: ref(fx.logicalID(fx.stack.Table)),
	}
	if w := wantSecrets(t, fx, fn, secretPrefix); w != nil {
		env[resources.EnvSecrets] = w
	}
	var qs []*resources.QueueSpec
	qs = append(qs, fn.SendsTo...)
	if fn.Consumes != nil {
		qs = append(qs, fn.Consumes)
	}
	if fn.Wakes != nil {
		qs = append(qs, fn.Wakes)
	}
	for _, q := range qs {
		env[q.EnvURL] = ref(fx.logicalID(fx.stack.Queues[q.Name]))
	}
	if q := fn.Consumes; q != nil {
		env[q.EnvDLQURL] = ref(fx.logicalID(fx.stack.DLQs[q.Name]))
	}
	if fn.Name == resources.Turn.Name {
		env[EnvAgentURL] = agentURL
	}
	if fn.Media || fn.MediaOut != "" {
		env[resources.EnvMediaBucket] = ref(fx.logicalID(fx.stack.MediaBucket))
	}
	return env
}

// agentSecretID is the logical id of the one secret the template creates.
func agentSecretID(t *testing.T, fx *fixture) string {
	t.Helper()
	s := fx.resourcesOf("AWS::SecretsManager::Secret")
	if len(s) != 1 {
		t.Fatalf("%d secrets in the template, want 1 (the agent secret)", len(s))
	}
	return sortedKeys(s)[0]
}

// wantSecrets is fn's PARLEY_SECRETS as it reads at deploy time, decoded:
// exactly the keys of its FunctionSpec.Secrets, the agent secret's to its ARN
// (${logical id}), every other to its name, <prefix><KEY>. nil: fn reads no
// secret, and has no PARLEY_SECRETS.
func wantSecrets(t *testing.T, fx *fixture, fn resources.FunctionSpec, prefix string) map[string]any {
	if len(fn.Secrets) == 0 {
		return nil
	}
	m := map[string]any{}
	for _, k := range fn.Secrets {
		if k == resources.SecretAgentSecret {
			m[k] = "${" + agentSecretID(t, fx) + "}"
		} else {
			m[k] = prefix + k
		}
	}
	return m
}

// wantSecretGrants is what fn's role may read secrets on, rendered: exactly
// one ARN or ARN pattern per key of its FunctionSpec.Secrets.
func wantSecretGrants(t *testing.T, fx *fixture, fn resources.FunctionSpec, prefix string) []string {
	var want []string
	for _, k := range fn.Secrets {
		if k == resources.SecretAgentSecret {
			want = append(want, "${"+agentSecretID(t, fx)+"}")
		} else {
			want = append(want, secretARNPattern(prefix+k))
		}
	}
	slices.Sort(want)
	return want
}

// decodeSecrets reads a PARLEY_SECRETS value from the template: a string, or
// an Fn::Join around the agent secret's Ref, either of which must be a JSON
// object of strings once CloudFormation resolves it.
func decodeSecrets(t *testing.T, v any) map[string]any {
	t.Helper()
	s, err := render(v)
	if err != nil {
		t.Fatalf("%s: %v", resources.EnvSecrets, err)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s = %s is not a JSON object of strings at deploy: %v", resources.EnvSecrets, s, err)
	}
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// environmentOf is fn's environment in the template, PARLEY_SECRETS decoded.
func environmentOf(t *testing.T, fx *fixture, fn resources.FunctionSpec) map[string]any {
	t.Helper()
	env := props(fx.resource(t, fx.logicalID(fx.stack.Functions[fn.Name])))["Environment"].(map[string]any)["Variables"].(map[string]any)
	out := map[string]any{}
	for k, v := range env {
		out[k] = v
	}
	if v, ok := env[resources.EnvSecrets]; ok {
		out[resources.EnvSecrets] = decodeSecrets(t, v)
	}
	return out
}

// Default fixture values derived from the stack name.
const defaultSecretPrefix = DefaultStackName + "/"

func TestFunctions(t *testing.T) {
	fx := defaultFixture(t)
	keys := map[string]bool{} // S3 keys: one asset per function
	for _, fn := range registry.Functions() {
		t.Run(fn.Name, func(t *testing.T) {
			id := fx.logicalID(fx.stack.Functions[fn.Name])
			r := fx.resource(t, id)
			p := props(r)
			for k, want := range map[string]any{
				"Runtime":       "provided.al2023",
				"Architectures": []any{"arm64"},
				"Handler":       "bootstrap",
				"Timeout":       fn.Timeout.Seconds(),
				"MemorySize":    fn.MemoryMB,
				"Role":          getAtt(fx.logicalID(fx.stack.Functions[fn.Name].Role()), "Arn"),
			} {
				if !equalJSON(p[k], want) {
					t.Errorf("%s = %s, want %s", k, asJSON(p[k]), asJSON(want))
				}
			}
			env := environmentOf(t, fx, fn)
			if want := wantEnvironment(t, fx, fn, DefaultAgentURL, defaultSecretPrefix); !equalJSON(env, want) {
				t.Errorf("environment:\n got %s\nwant %s", asJSON(env), asJSON(want))
			}

			// JSON logs into a log group of its own, kept a month.
			lc := p["LoggingConfig"].(map[string]any)
			if lc["LogFormat"] != "JSON" {
				t.Errorf("LogFormat = %v, want JSON", lc["LogFormat"])
			}
			lg, ok := lc["LogGroup"].(map[string]any)["Ref"].(string)
			if !ok {
				t.Fatalf("LogGroup = %s, want a Ref", asJSON(lc["LogGroup"]))
			}
			if got := props(fx.resource(t, lg))["RetentionInDays"]; !equalJSON(got, 30) {
				t.Errorf("log retention %v days, want 30", got)
			}

			// The code is this function's zip, uploaded as it is.
			meta, _ := r["Metadata"].(map[string]any)
			staged, _ := meta["aws:asset:path"].(string)
			if staged == "" {
				t.Fatalf("no aws:asset:path in %s's metadata", id)
			}
			got, err := os.ReadFile(filepath.Join(fx.outdir, staged))
			if err != nil {
				t.Fatalf("staged asset: %v", err)
			}
			want, err := os.ReadFile(AssetPath(fx.assets, fn.Name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) || meta["aws:asset:is-bundled"] != false {
				t.Errorf("asset %s is not %s.zip as built", staged, fn.Name)
			}
			key := asJSON(p["Code"].(map[string]any)["S3Key"])
			if keys[key] {
				t.Errorf("S3 key %s shared with another function", key)
			}
			keys[key] = true
		})
	}
}

func TestFunctionURLs(t *testing.T) {
	fx := defaultFixture(t)
	urls := map[string]bool{} // function logical ids with a URL
	for _, u := range fx.resourcesOf("AWS::Lambda::Url") {
		p := props(u)
		if p["AuthType"] != "NONE" {
			t.Errorf("URL auth %v, want NONE (platforms cannot sign with SigV4)", p["AuthType"])
		}
		urls[p["TargetFunctionArn"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)] = true
	}
	outputs := fx.json["Outputs"].(map[string]any)
	for _, fn := range registry.Functions() {
		id := fx.logicalID(fx.stack.Functions[fn.Name])
		out := constructID(fn.Name) + "Url"
		_, hasOutput := outputs[out]
		if ingress := fn.Kind == resources.Ingress; urls[id] != ingress || hasOutput != ingress {
			t.Errorf("%s (%s): URL %v, output %s %v", fn.Name, fn.Kind, urls[id], out, hasOutput)
		}
		if fn.Kind != resources.Ingress {
			continue
		}
		// Public invocation is allowed only through the URL.
		for _, action := range []string{"lambda:InvokeFunctionUrl", "lambda:InvokeFunction"} {
			found := false
			for _, perm := range fx.resourcesOf("AWS::Lambda::Permission") {
				p := props(perm)
				if p["Action"] == action && equalJSON(p["FunctionName"], getAtt(id, "Arn")) && p["Principal"] == "*" {
					found = true
					if action == "lambda:InvokeFunction" && p["InvokedViaFunctionUrl"] != true {
						t.Errorf("%s: public %s not limited to the function URL", fn.Name, action)
					}
				}
			}
			if !found {
				t.Errorf("%s: no public %s permission", fn.Name, action)
			}
		}
	}
}

func TestEventSourceMappings(t *testing.T) {
	fx := defaultFixture(t)
	esms := fx.resourcesOf("AWS::Lambda::EventSourceMapping")
	for _, fn := range registry.Functions() {
		id := fx.logicalID(fx.stack.Functions[fn.Name])
		var mine []map[string]any
		for _, esm := range esms {
			if equalJSON(props(esm)["FunctionName"], ref(id)) {
				mine = append(mine, props(esm))
			}
		}
		if fn.Kind != resources.Consumer {
			if len(mine) != 0 {
				t.Errorf("%s (%s) has %d event source mappings", fn.Name, fn.Kind, len(mine))
			}
			continue
		}
		if len(mine) != 1 {
			t.Fatalf("%s: %d event source mappings, want 1", fn.Name, len(mine))
		}
		want := map[string]any{
			"FunctionName":          ref(id),
			"EventSourceArn":        getAtt(fx.logicalID(fx.stack.Queues[fn.Consumes.Name]), "Arn"),
			"BatchSize":             fn.BatchSize,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"ScalingConfig":         map[string]any{"MaximumConcurrency": fn.MaxConcurrency},
		}
		if !equalJSON(mine[0], want) {
			t.Errorf("%s:\n got %s\nwant %s", fn.Name, asJSON(mine[0]), asJSON(want))
		}
		if fn.BatchSize > 10 {
			t.Errorf("%s: batch size %d over FIFO's 10", fn.Name, fn.BatchSize)
		}
	}
}

// statements lists every policy statement in the template: IAM policies,
// roles' inline policies and assume-role documents, and resource policies.
func statements(fx *fixture) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	var walk func(id string, v any)
	walk = func(id string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if st, ok := v["Statement"]; ok {
				for _, s := range list(st) {
					out[id] = append(out[id], s.(map[string]any))
				}
				return
			}
			for _, x := range v {
				walk(id, x)
			}
		case []any:
			for _, x := range v {
				walk(id, x)
			}
		}
	}
	for id, r := range fx.json["Resources"].(map[string]any) {
		walk(id, props(r.(map[string]any)))
	}
	return out
}

func TestNoWildcardActions(t *testing.T) {
	for name, fx := range fixtures(t) {
		sts := statements(fx)
		if len(sts) == 0 {
			t.Fatal("no policy statements found")
		}
		for id, ss := range sts {
			for _, s := range ss {
				// A Deny may be broad (enforceSSL denies sqs:* without
				// TLS); an Allow never is. NotAction in an Allow would
				// allow everything else.
				if s["Effect"] == "Allow" {
					if s["NotAction"] != nil {
						t.Errorf("%s: %s allows NotAction %v", name, id, s["NotAction"])
					}
					for _, a := range list(s["Action"]) {
						if hasWildcard(a.(string)) {
							t.Errorf("%s: %s allows %s", name, id, a)
						}
					}
				}
				// Identity policies name their resources exactly; the one
				// pattern is a secret name's random -?????? suffix.
				if fx.resource(t, id)["Type"] == "AWS::IAM::Policy" {
					for _, r := range list(s["Resource"]) {
						str, err := render(r)
						if err != nil {
							continue // a GetAtt: an ARN CloudFormation knows
						}
						secretName := strings.Contains(str, ":secretsmanager:") && strings.HasSuffix(str, "-??????")
						if media := mediaObjects(fx); r != nil && equalJSON(r, media) {
							continue // the one key prefix the turn stores under
						}
						if hasWildcard(str) || (strings.Contains(str, "?") && !secretName) ||
							strings.Contains(strings.TrimSuffix(str, "-??????"), "?") {
							t.Errorf("%s: %s grants on %s", name, id, str)
						}
					}
				}
			}
		}
	}
}

// grants maps each action of role's policies to the resources it is allowed
// on, in JSON form.
func grants(t *testing.T, fx *fixture, roleID string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for id, pol := range fx.resourcesOf("AWS::IAM::Policy") {
		if !slices.ContainsFunc(list(props(pol)["Roles"]), func(r any) bool { return equalJSON(r, ref(roleID)) }) {
			continue
		}
		for _, s := range statements(fx)[id] {
			if s["Effect"] != "Allow" {
				continue
			}
			for _, a := range list(s["Action"]) {
				for _, r := range list(s["Resource"]) {
					g := asJSON(r)
					if c, ok := s["Condition"]; ok {
						g += " if " + asJSON(c)
					}
					out[a.(string)] = append(out[a.(string)], g)
				}
			}
		}
	}
	return out
}

func TestLeastPrivilege(t *testing.T) {
	for name, fx := range fixtures(t) {
		tableID := fx.logicalID(fx.stack.Table)
		table := []string{asJSON(getAtt(tableID, "Arn"))}
		for _, ix := range resources.Table.Indexes {
			table = append(table, asJSON(map[string]any{"Fn::Join": []any{"", []any{getAtt(tableID, "Arn"), "/index/" + ix.Name}}}))
		}
		prefix := map[string]string{"default": defaultSecretPrefix, "options": optSecretPrefix}[name]
		queue := func(q *resources.QueueSpec) []string {
			return []string{asJSON(getAtt(fx.logicalID(fx.stack.Queues[q.Name]), "Arn"))}
		}
		for _, fn := range registry.Functions() {
			t.Run(name+"/"+fn.Name, func(t *testing.T) {
				roleID := fx.logicalID(fx.stack.Functions[fn.Name].Role())
				role := props(fx.resource(t, roleID))
				if role["ManagedPolicyArns"] != nil || role["Policies"] != nil {
					t.Errorf("role has managed or inline policies: %s", asJSON(role))
				}
				want := map[string][]string{
					"logs:CreateLogStream": {asJSON(getAtt(fx.logicalID(fx.stack.Functions[fn.Name].LogGroup()), "Arn"))},
					"logs:PutLogEvents":    {asJSON(getAtt(fx.logicalID(fx.stack.Functions[fn.Name].LogGroup()), "Arn"))},
				}
				// Its own keys' secrets, and no other (compared rendered).
				if secrets := wantSecretGrants(t, fx, fn, prefix); len(secrets) > 0 {
					want["secretsmanager:GetSecretValue"] = secrets
					want["secretsmanager:DescribeSecret"] = secrets
				}
				for _, a := range TableActions {
					want[a] = table
				}
				add := func(action string, arns []string) { want[action] = append(want[action], arns...) }
				for _, q := range fn.SendsTo {
					add("sqs:SendMessage", queue(q))
					add("sqs:GetQueueAttributes", queue(q))
					add("sqs:GetQueueUrl", queue(q))
				}
				// A missing key is a 404 only with ListBucket: under the
				// prefix the function reads, and nowhere else.
				listUnder := func(prefix string) []string {
					return []string{asJSON(getAtt(fx.logicalID(fx.stack.MediaBucket), "Arn")) + " if " +
						asJSON(map[string]any{"StringLike": map[string]any{"s3:prefix": prefix + "*"}})}
				}
				if fn.Media {
					add("s3:GetObject", []string{asJSON(mediaObjects(fx))})
					add("s3:PutObject", []string{asJSON(mediaObjects(fx))})
					add("s3:ListBucket", listUnder(resources.MediaPrefix))
				}
				switch fn.Name {
				case resources.Reply.Name: // presigns uploads; reads none
					add("s3:PutObject", []string{asJSON(uploadObjects(fx))})
				case resources.Delivery.Name: // reads uploads; writes none
					add("s3:GetObject", []string{asJSON(uploadObjects(fx))})
					add("s3:ListBucket", listUnder(resources.MediaOutPrefix))
				}
				if fn.Wakes != nil {
					// Visibility only: it can neither read nor delete.
					add("sqs:ChangeMessageVisibility", queue(fn.Wakes))
				}
				if fn.Consumes != nil {
					for _, a := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"} {
						add(a, queue(fn.Consumes))
					}
					// It moves poison records to its own DLQ, and may do nothing else there.
					add("sqs:SendMessage", []string{asJSON(getAtt(fx.logicalID(fx.stack.DLQs[fn.Consumes.Name]), "Arn"))})
				}
				got := grants(t, fx, roleID)
				for a, rs := range got {
					if strings.HasPrefix(a, "secretsmanager:") {
						got[a] = renderedGrants(t, rs)
					}
				}
				for _, m := range []map[string][]string{got, want} {
					for k := range m {
						slices.Sort(m[k])
						m[k] = slices.Compact(m[k])
					}
				}
				for _, a := range sortedKeys(want) {
					if !slices.Equal(got[a], want[a]) {
						t.Errorf("%s on %v, want on %v", a, got[a], want[a])
					}
				}
				for _, a := range sortedKeys(got) {
					if _, ok := want[a]; !ok {
						t.Errorf("unexpected grant %s on %v", a, got[a])
					}
				}
			})
		}
	}
}

// renderedGrants renders grants' resources (in JSON form).
func renderedGrants(t *testing.T, rs []string) []string {
	t.Helper()
	out := make([]string, len(rs))
	for i, r := range rs {
		var v any
		if err := json.Unmarshal([]byte(r), &v); err != nil {
			t.Fatal(err)
		}
		s, err := render(v)
		if err != nil {
			t.Fatalf("grant on %s: %v", r, err)
		}
		out[i] = s
	}
	return out
}

// TestSecrets (security finding): one secret per key, and each function
// may read, and is told about, only its own keys' secrets
// (FunctionSpec.Secrets); no secret value is in the template.
func TestSecrets(t *testing.T) {
	fx := defaultFixture(t)
	agent := agentSecretID(t, fx)
	keys := map[string]bool{}
	for _, k := range []string{
		telegram.SettingBotToken, telegram.SettingWebhookSecret, slack.SettingSigningSecret,
		slack.SettingBotToken, resources.SecretAgentSecret, resources.SecretEventsSecrets, resources.SecretGitHubWebhookSecret,
	} {
		keys[k] = true
	}
	for _, fn := range registry.Functions() {
		for _, k := range fn.Secrets {
			keys[k] = true
		}
	}
	for id, f := range fx.resourcesOf("AWS::Lambda::Function") {
		env := props(f)["Environment"].(map[string]any)["Variables"].(map[string]any)
		for name := range env {
			if name == resources.EnvSecrets {
				continue // ids, checked below
			}
			if keys[name] || strings.Contains(name, "TOKEN") || strings.HasSuffix(name, "SECRET") || strings.HasSuffix(name, "SECRETS") {
				t.Errorf("%s: environment variable %s looks like a secret", id, name)
			}
		}
	}
	for _, fn := range registry.Functions() {
		t.Run(fn.Name, func(t *testing.T) {
			env := environmentOf(t, fx, fn)
			want := wantSecrets(t, fx, fn, defaultSecretPrefix)
			got, ok := env[resources.EnvSecrets]
			if want == nil {
				if ok {
					t.Errorf("%s = %v on a function that reads no secret", resources.EnvSecrets, got)
				}
			} else if !equalJSON(got, want) {
				// Ids only: a name or the agent secret's ARN, never a value.
				t.Errorf("%s = %s, want %s", resources.EnvSecrets, asJSON(got), asJSON(want))
			}
			role := fx.logicalID(fx.stack.Functions[fn.Name].Role())
			gr := grants(t, fx, role)
			for a, rs := range gr {
				if !strings.HasPrefix(a, "secretsmanager:") {
					continue
				}
				if a != "secretsmanager:GetSecretValue" && a != "secretsmanager:DescribeSecret" {
					t.Errorf("unexpected %s on %v", a, rs)
				}
			}
			wantGrants := wantSecretGrants(t, fx, fn, defaultSecretPrefix)
			for _, a := range []string{"secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"} {
				got := renderedGrants(t, gr[a])
				slices.Sort(got)
				if !slices.Equal(slices.Compact(got), wantGrants) {
					t.Errorf("%s on\n  %v\nwant exactly its keys' secrets\n  %v", a, got, wantGrants)
				}
			}
		})
	}

	// The finding itself: the public Slack webhook reads its signing secret
	// and nothing else.
	slack := renderedGrants(t, grants(t, fx, fx.logicalID(fx.stack.Functions[string(message.Slack)].Role()))["secretsmanager:GetSecretValue"])
	if want := []string{secretARNPattern("Parley/SLACK_SIGNING_SECRET")}; !slices.Equal(slack, want) {
		t.Errorf("slack reads secrets on %v, want %v", slack, want)
	}

	// PARLEY_SECRETS in the template, for the turn function: valid JSON once
	// CloudFormation puts the agent secret's ARN in, keys sorted.
	turn := props(fx.resource(t, fx.logicalID(fx.stack.Functions[resources.Turn.Name])))["Environment"].(map[string]any)["Variables"].(map[string]any)[resources.EnvSecrets]
	wantTurn := map[string]any{"Fn::Join": []any{"", []any{
		`{"DISCORD_BOT_TOKEN":"Parley/DISCORD_BOT_TOKEN","GOOGLECHAT_SERVICE_ACCOUNT":"Parley/GOOGLECHAT_SERVICE_ACCOUNT","LINE_CHANNEL_ACCESS_TOKEN":"Parley/LINE_CHANNEL_ACCESS_TOKEN","PARLEY_AGENT_SECRET":"`, ref(agent),
		`","SLACK_BOT_TOKEN":"Parley/SLACK_BOT_TOKEN","TEAMS_APP_PASSWORD":"Parley/TEAMS_APP_PASSWORD","TELEGRAM_BOT_TOKEN":"Parley/TELEGRAM_BOT_TOKEN","WHATSAPP_ACCESS_TOKEN":"Parley/WHATSAPP_ACCESS_TOKEN"}`,
	}}}
	if !equalJSON(turn, wantTurn) {
		t.Errorf("turn %s:\n got %s\nwant %s", resources.EnvSecrets, asJSON(turn), asJSON(wantTurn))
	}
	delivery := props(fx.resource(t, fx.logicalID(fx.stack.Functions[resources.Delivery.Name])))["Environment"].(map[string]any)["Variables"].(map[string]any)[resources.EnvSecrets]
	if want := `{"DISCORD_BOT_TOKEN":"Parley/DISCORD_BOT_TOKEN","GOOGLECHAT_SERVICE_ACCOUNT":"Parley/GOOGLECHAT_SERVICE_ACCOUNT","LINE_CHANNEL_ACCESS_TOKEN":"Parley/LINE_CHANNEL_ACCESS_TOKEN",` +
		`"SLACK_BOT_TOKEN":"Parley/SLACK_BOT_TOKEN","TEAMS_APP_PASSWORD":"Parley/TEAMS_APP_PASSWORD","TELEGRAM_BOT_TOKEN":"Parley/TELEGRAM_BOT_TOKEN","WHATSAPP_ACCESS_TOKEN":"Parley/WHATSAPP_ACCESS_TOKEN"}`; delivery != want {
		t.Errorf("delivery %s = %s, want %s", resources.EnvSecrets, asJSON(delivery), want)
	}

	// The agent secret: a generated plain string, named by CloudFormation.
	p := props(fx.resource(t, agent))
	for _, k := range []string{"SecretString", "Name"} {
		if _, ok := p[k]; ok {
			t.Errorf("agent secret has %s = %v", k, p[k])
		}
	}
	if gen := p["GenerateSecretString"]; !equalJSON(gen, map[string]any{"ExcludePunctuation": true, "PasswordLength": 48}) {
		t.Errorf("agent secret GenerateSecretString = %s, want 48 characters without punctuation, no JSON", asJSON(gen))
	}
	if n := len(fx.resourcesOf("AWS::SecretsManager::ResourcePolicy")); n != 0 {
		t.Errorf("%d secret resource policies", n)
	}

	must(t, func() {
		fx.template.HasOutput(jsii.String(OutputAgentSecretARN), map[string]any{"Value": ref(agent)})
	})
	must(t, func() {
		fx.template.HasOutput(jsii.String(OutputSecretNames), map[string]any{
			"Value": "Parley/TELEGRAM_BOT_TOKEN,Parley/TELEGRAM_WEBHOOK_SECRET,Parley/SLACK_SIGNING_SECRET," +
				"Parley/SLACK_BOT_TOKEN,Parley/DISCORD_BOT_TOKEN,Parley/LINE_CHANNEL_SECRET,Parley/LINE_CHANNEL_ACCESS_TOKEN," +
				"Parley/WHATSAPP_APP_SECRET,Parley/WHATSAPP_VERIFY_TOKEN,Parley/WHATSAPP_ACCESS_TOKEN," +
				"Parley/TEAMS_APP_PASSWORD,Parley/GOOGLECHAT_SERVICE_ACCOUNT," +
				"Parley/PARLEY_EVENTS_SECRETS,Parley/GITHUB_WEBHOOK_SECRET",
		})
	})
	if _, ok := fx.json["Outputs"].(map[string]any)["SecretArn"]; ok {
		t.Error("the old SecretArn output is still there")
	}
	if fx.stack.SecretPrefix != *fx.stack.Stack.StackName()+"/" {
		t.Errorf("default secret prefix %q, want <stack name>/", fx.stack.SecretPrefix)
	}
}

// TestIngressConcurrency (security finding): every public Function URL
// function has reserved concurrency, so a flood cannot drain the account's
// concurrency; nothing else reserves any.
func TestIngressConcurrency(t *testing.T) {
	for name, want := range map[string]int{"default": DefaultIngressConcurrency, "options": optIngressConcurrency} {
		fx := fixtures(t)[name]
		for _, fn := range registry.Functions() {
			got, ok := props(fx.resource(t, fx.logicalID(fx.stack.Functions[fn.Name])))["ReservedConcurrentExecutions"]
			switch {
			case fn.Kind == resources.Ingress && !equalJSON(got, want):
				t.Errorf("%s: %s ReservedConcurrentExecutions = %v, want %d", name, fn.Name, got, want)
			case fn.Kind != resources.Ingress && ok:
				t.Errorf("%s: %s (%s) reserves %v", name, fn.Name, fn.Kind, got)
			}
		}
	}
	if DefaultIngressConcurrency != 10 {
		t.Errorf("default %d, want 10", DefaultIngressConcurrency)
	}
}

// 0 reserves nothing (ReservedConcurrentExecutions 0 would throttle every
// request).
func TestNoIngressConcurrency(t *testing.T) {
	assets := t.TempDir()
	if err := writeZips(assets); err != nil {
		t.Fatal(err)
	}
	app := awscdk.NewApp(nil)
	zero := 0
	s, err := New(app, "Parley", nil, Config{AssetDir: assets, IngressConcurrency: &zero})
	if err != nil {
		t.Fatal(err)
	}
	var tpl map[string]any
	must(t, func() { tpl = *assertions.Template_FromStack(s.Stack, nil).ToJSON() })
	for id, r := range tpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if _, ok := props(r)["ReservedConcurrentExecutions"]; r["Type"] == "AWS::Lambda::Function" && ok {
			t.Errorf("%s reserves concurrency with %s=0", id, ContextIngressConcurrency)
		}
	}
}

func TestAlarms(t *testing.T) {
	fx := defaultFixture(t)
	stackName := *fx.stack.Stack.StackName()
	topicID := fx.logicalID(fx.stack.AlarmTopic)
	alarms := fx.resourcesOf("AWS::CloudWatch::Alarm")
	find := func(t *testing.T, name string) map[string]any {
		t.Helper()
		for _, a := range alarms {
			if props(a)["AlarmName"] == AlarmName(stackName, name) {
				return props(a)
			}
		}
		t.Fatalf("no alarm %s", AlarmName(stackName, name))
		return nil
	}
	expect := func(t *testing.T, name, metric string, dimension map[string]any, threshold float64) {
		t.Helper()
		a := find(t, name)
		got := map[string]any{
			"MetricName": a["MetricName"], "Dimensions": a["Dimensions"], "Threshold": a["Threshold"],
			"ComparisonOperator": a["ComparisonOperator"], "AlarmActions": a["AlarmActions"],
		}
		want := map[string]any{
			"MetricName": metric, "Dimensions": []any{dimension}, "Threshold": threshold,
			"ComparisonOperator": "GreaterThanThreshold", "AlarmActions": []any{ref(topicID)},
		}
		if !equalJSON(got, want) {
			t.Errorf("alarm %s:\n got %s\nwant %s", name, asJSON(got), asJSON(want))
		}
	}
	for _, q := range resources.Queues() {
		dlq := fx.logicalID(fx.stack.DLQs[q.Name])
		expect(t, q.DLQName()+"-not-empty", "ApproximateNumberOfMessagesVisible",
			map[string]any{"Name": "QueueName", "Value": getAtt(dlq, "QueueName")}, 0)
		main := fx.logicalID(fx.stack.Queues[q.Name])
		expect(t, q.Name+"-oldest-message-age", "ApproximateAgeOfOldestMessage",
			map[string]any{"Name": "QueueName", "Value": getAtt(main, "QueueName")}, OldestMessageAlarm[q.Name].Seconds())
	}
	for _, fn := range registry.Functions() {
		dim := map[string]any{"Name": "FunctionName", "Value": ref(fx.logicalID(fx.stack.Functions[fn.Name]))}
		expect(t, fn.Name+"-errors", "Errors", dim, 0)
		expect(t, fn.Name+"-throttles", "Throttles", dim, 0)
		if fn.Kind == resources.Ingress {
			expect(t, fn.Name+"-url-5xx", "Url5xxCount", dim, 0)
		}
	}

	// The topic takes TLS only, and CloudWatch may publish for this stack's
	// alarms alone.
	must(t, func() {
		fx.template.HasResourceProperties(jsii.String("AWS::SNS::TopicPolicy"), map[string]any{
			"Topics": []any{ref(topicID)},
			"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
				assertions.Match_ObjectLike(&map[string]any{"Effect": "Deny", "Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}}}),
				assertions.Match_ObjectLike(&map[string]any{
					"Effect": "Allow", "Action": "sns:Publish", "Principal": map[string]any{"Service": "cloudwatch.amazonaws.com"},
					"Condition": assertions.Match_ObjectLike(&map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": ref("AWS::AccountId")}}),
				}),
			})},
		})
	})
	must(t, func() {
		fx.template.HasOutput(jsii.String(OutputAlarmTopicARN), map[string]any{"Value": ref(topicID)})
	})
	if n := len(fx.resourcesOf("AWS::SNS::Subscription")); n != 0 {
		t.Errorf("%d subscriptions without %s", n, ContextAlarmEmail)
	}
}

// The options fixture sets every context key: a secret prefix, an ingress
// concurrency, an agent, an alarm email and a stack name.
const (
	optSecretPrefix       = "parley/staging/"
	optIngressConcurrency = 25
	optAgentURL           = "https://agent.example.com/turn"
	optEmail              = "oncall@example.com"
	optStack              = "ParleyStaging"
)

func optionsFixture(t *testing.T) *fixture {
	t.Helper()
	optionsOnce.Do(func() {
		optionsFx, optionsErr = synthesize("options", map[string]any{
			ContextSecretPrefix:       optSecretPrefix,
			ContextIngressConcurrency: optIngressConcurrency,
			ContextAgentURL:           optAgentURL,
			ContextAlarmEmail:         optEmail,
			ContextStackName:          optStack,
			ContextEnv: `{"PARLEY_BUBBLE_DELAY":"800ms","PARLEY_TRIAGE":"{\"quiet_hours\":\"22:00-07:00\"}",` +
				`"PARLEY_AGENT_TIMEOUT":"300s","PARLEY_SEND_TIMEOUT":"26s","PARLEY_MEDIA_TTL":"72h"}`,
		})
	})
	if optionsErr != nil {
		t.Fatal(optionsErr)
	}
	return optionsFx
}

// fixtures returns both configurations, for the checks that hold for all.
func fixtures(t *testing.T) map[string]*fixture {
	return map[string]*fixture{"default": defaultFixture(t), "options": optionsFixture(t)}
}

func TestOptions(t *testing.T) {
	fx := optionsFixture(t)
	for _, m := range fx.nag {
		t.Error(m)
	}
	if got := *fx.stack.Stack.StackName(); got != optStack {
		t.Errorf("stack name %s, want %s", got, optStack)
	}
	if n := len(fx.resourcesOf("AWS::SecretsManager::Secret")); n != 1 {
		t.Errorf("%d secrets created, want the agent secret only", n)
	}
	for _, fn := range registry.Functions() {
		env := environmentOf(t, fx, fn)
		// PARLEY_SECRETS names the operator's secrets with the prefix.
		want := wantEnvironment(t, fx, fn, optAgentURL, optSecretPrefix)
		want["PARLEY_BUBBLE_DELAY"] = "800ms"
		want["PARLEY_TRIAGE"] = `{"quiet_hours":"22:00-07:00"}`
		want["PARLEY_AGENT_TIMEOUT"], want["PARLEY_SEND_TIMEOUT"] = "300s", "26s"
		want["PARLEY_MEDIA_TTL"] = "72h"
		if !equalJSON(env, want) {
			t.Errorf("%s environment:\n got %s\nwant %s", fn.Name, asJSON(env), asJSON(want))
		}
		// And so do the grants.
		got := renderedGrants(t, grants(t, fx, fx.logicalID(fx.stack.Functions[fn.Name].Role()))["secretsmanager:GetSecretValue"])
		slices.Sort(got)
		if want := wantSecretGrants(t, fx, fn, optSecretPrefix); !slices.Equal(got, want) {
			t.Errorf("%s reads secrets on %v, want exactly %v", fn.Name, got, want)
		}
		for _, g := range got {
			if strings.Contains(g, ":secret:") && !strings.Contains(g, ":secret:"+optSecretPrefix) {
				t.Errorf("%s reads %s, outside %s", fn.Name, g, optSecretPrefix)
			}
		}
	}
	for _, q := range resources.Queues() {
		if got := props(fx.resource(t, fx.logicalID(fx.stack.Queues[q.Name])))["QueueName"]; got != QueueName(optStack, q.Name) {
			t.Errorf("queue name %v, want %s", got, QueueName(optStack, q.Name))
		}
	}
	if got := fx.json["Outputs"].(map[string]any)[OutputSecretNames].(map[string]any)["Value"]; !strings.HasPrefix(asJSON(got), `"`+optSecretPrefix+"TELEGRAM_BOT_TOKEN,") {
		t.Errorf("%s = %v, want names under %s", OutputSecretNames, got, optSecretPrefix)
	}
	must(t, func() {
		fx.template.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), map[string]any{
			"Protocol": "email", "Endpoint": optEmail, "TopicArn": ref(fx.logicalID(fx.stack.AlarmTopic)),
		})
	})
}

// TestScheduledFunctions: each scheduled function (the sweeper) is invoked by
// an EventBridge rule at its declared rate, with no retries (the next run
// makes up a missed one), and EventBridge may invoke it.
func TestScheduledFunctions(t *testing.T) {
	fx := defaultFixture(t)
	for _, fn := range registry.Functions() {
		if fn.Kind != resources.Scheduled {
			continue
		}
		fid := fx.logicalID(fx.stack.Functions[fn.Name])
		must(t, func() {
			fx.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
				"ScheduleExpression": fmt.Sprintf("rate(%d minute%s)", int(fn.Every.Minutes()), map[bool]string{true: "", false: "s"}[fn.Every == time.Minute]),
				"State":              "ENABLED",
				"Targets": []any{assertions.Match_ObjectLike(&map[string]any{
					"Arn":         getAtt(fid, "Arn"),
					"RetryPolicy": map[string]any{"MaximumRetryAttempts": 0},
				})},
			})
		})
		must(t, func() {
			fx.template.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), map[string]any{
				"Action":       "lambda:InvokeFunction",
				"FunctionName": getAtt(fid, "Arn"),
				"Principal":    "events.amazonaws.com",
			})
		})
	}
}

// TestTimeoutsFollowTheSettings (finding 8.5): the consumers' timeouts and
// their queues' visibility timeouts are sized from the settings they run
// with, so a 300 s agent timeout or a 26 s send timeout works end to end.
func TestTimeoutsFollowTheSettings(t *testing.T) {
	fx := optionsFixture(t)
	timing := resources.Timing{AgentTimeout: 300 * time.Second, SendTimeout: 26 * time.Second}
	for name, want := range map[string]time.Duration{resources.Turn.Name: timing.TurnTimeout(), resources.Delivery.Name: timing.DeliveryTimeout()} {
		fn := props(fx.resource(t, fx.logicalID(fx.stack.Functions[name])))
		if fn["Timeout"] != want.Seconds() {
			t.Errorf("%s timeout %v, want %v", name, fn["Timeout"], want.Seconds())
		}
	}
	for _, q := range resources.QueuesFor(timing) {
		got := props(fx.resource(t, fx.logicalID(fx.stack.Queues[q.Name])))["VisibilityTimeout"]
		if got != q.VisibilityTimeout.Seconds() {
			t.Errorf("%s visibility %v, want %v", q.Name, got, q.VisibilityTimeout.Seconds())
		}
	}
	if timing.TurnTimeout() != 315*time.Second || timing.DeliveryTimeout() != 46*time.Second {
		t.Fatalf("sized %s and %s", timing.TurnTimeout(), timing.DeliveryTimeout())
	}
}

// TestTeamsAndGoogleChatURLs: the Teams bot's messaging endpoint and the
// Chat app's HTTP endpoint (README, "Microsoft Teams", "Google Chat") are
// the stack's TeamsUrl and GooglechatUrl outputs, their functions' URLs.
func TestTeamsAndGoogleChatURLs(t *testing.T) {
	fx := defaultFixture(t)
	outputs := fx.json["Outputs"].(map[string]any)
	for output, function := range map[string]string{"TeamsUrl": "teams", "GooglechatUrl": "googlechat"} {
		out, ok := outputs[output].(map[string]any)
		if !ok {
			t.Fatalf("no %s output: %v", output, outputs)
		}
		ref := out["Value"].(map[string]any)["Fn::GetAtt"].([]any)
		url := fx.resource(t, ref[0].(string))
		fn := props(url)["TargetFunctionArn"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
		if fn != fx.logicalID(fx.stack.Functions[function]) {
			t.Fatalf("%s is the URL of %s, not the %s function", output, fn, function)
		}
	}
}

// TestOperatorOutputs: the operator CLI finds a deployed stack by its
// outputs (resources.Output*): the table, the queues, and every function's
// name and log group, each pair naming the function's own resources.
func TestOperatorOutputs(t *testing.T) {
	fx := defaultFixture(t)
	outputs := fx.json["Outputs"].(map[string]any)
	for _, key := range []string{resources.OutputTableName, resources.QueueURLOutput("inbound"), resources.QueueURLOutput("inbound-dlq"),
		resources.QueueURLOutput("outbound"), resources.QueueURLOutput("outbound-dlq"), resources.OutputFunctionNames, resources.OutputLogGroupNames} {
		if _, ok := outputs[key]; !ok {
			t.Errorf("no output %s", key)
		}
	}
	joined := asJSON(outputs[resources.OutputFunctionNames].(map[string]any)["Value"])
	for _, spec := range registry.Functions() {
		if !strings.Contains(joined, spec.Name+"=") || !strings.Contains(joined, fx.logicalID(fx.stack.Functions[spec.Name])) {
			t.Errorf("%s lacks %s: %s", resources.OutputFunctionNames, spec.Name, joined)
		}
	}
	groups := asJSON(outputs[resources.OutputLogGroupNames].(map[string]any)["Value"])
	if !strings.Contains(groups, "turn=") || !strings.Contains(groups, "Logs") {
		t.Errorf("%s: %s", resources.OutputLogGroupNames, groups)
	}
}

// mediaObjects is the grant's resource for the media bucket's stored
// attachments: <bucket ARN>/in/*.
func mediaObjects(fx *fixture) any {
	return map[string]any{"Fn::Join": []any{"", []any{getAtt(fx.logicalID(fx.stack.MediaBucket), "Arn"), "/" + resources.MediaPrefix + "*"}}}
}

func TestMediaBucketIsPrivateEncryptedTLSOnlyAndExpires(t *testing.T) {
	for name, fx := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			id := fx.logicalID(fx.stack.MediaBucket)
			b := props(fx.resource(t, id))
			want := map[string]any{
				"PublicAccessBlockConfiguration": map[string]any{"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true},
				"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": []any{map[string]any{
					"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"}}}},
				"OwnershipControls": map[string]any{"Rules": []any{map[string]any{"ObjectOwnership": "BucketOwnerEnforced"}}},
			}
			for k, v := range want {
				if !equalJSON(b[k], v) {
					t.Errorf("%s = %s, want %s", k, asJSON(b[k]), asJSON(v))
				}
			}
			days := map[string]float64{"default": 7, "options": 3}[name]
			rules := asJSON(b["LifecycleConfiguration"])
			if !strings.Contains(rules, `"ExpirationInDays":`+strconv.FormatFloat(days, 'f', -1, 64)) || !strings.Contains(rules, `"Status":"Enabled"`) {
				t.Errorf("lifecycle %s: want objects expired after %v days", rules, days)
			}
			// TLS only: a Deny on aws:SecureTransport false.
			var tls bool
			for pid, pol := range fx.resourcesOf("AWS::S3::BucketPolicy") {
				for _, s := range statements(fx)[pid] {
					cond := asJSON(s["Condition"])
					tls = tls || (s["Effect"] == "Deny" && strings.Contains(cond, `"aws:SecureTransport":"false"`) && equalJSON(props(pol)["Bucket"], ref(id)))
				}
			}
			if !tls {
				t.Error("no bucket policy denies requests without TLS")
			}
			// Only the functions that store media or use uploads know the bucket.
			for _, fn := range registry.Functions() {
				env := asJSON(props(fx.resource(t, fx.logicalID(fx.stack.Functions[fn.Name])))["Environment"])
				want := fn.Media || fn.MediaOut != ""
				if strings.Contains(env, resources.EnvMediaBucket) != want {
					t.Errorf("%s: media bucket in its environment: %v, want %v", fn.Name, !want, want)
				}
			}
		})
	}
}

// uploadObjects is the ARN of the media bucket's keys agents upload to:
// <bucket ARN>/out/*.
func uploadObjects(fx *fixture) map[string]any {
	return map[string]any{"Fn::Join": []any{"", []any{getAtt(fx.logicalID(fx.stack.MediaBucket), "Arn"), "/" + resources.MediaOutPrefix + "*"}}}
}
