package stack

import (
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/jsii-runtime-go"

	"github.com/parleyhq/parley/shared/platform/registry"
	"github.com/parleyhq/parley/shared/resources"
)

// OldestMessageAlarm is the age of a queue's oldest message that raises an
// alarm, per queue. Inbound work is a turn the user waits for; outbound units
// may legitimately wait out a platform's rate limit (retry_after) parked on
// their visibility timeout, hence the longer threshold there.
var OldestMessageAlarm = map[string]time.Duration{
	resources.Inbound.Name:  5 * time.Minute,
	resources.Outbound.Name: 15 * time.Minute,
}

// defaultOldestMessageAlarm applies to a queue missing from OldestMessageAlarm.
const defaultOldestMessageAlarm = 15 * time.Minute

// Outputs the stack declares besides the Function URLs (<Function>Url).
const (
	OutputAlarmTopicARN = "AlarmTopicArn"
	// OutputAgentSecretARN is the generated PARLEY_AGENT_SECRET's ARN: read
	// its value and give it to the agent.
	OutputAgentSecretARN = "AgentSecretArn"
	// OutputSecretNames lists, comma-separated, the names of the secrets
	// the operator creates (<prefix><KEY>), one per platform credential.
	OutputSecretNames = "SecretNames"
	OutputTableName   = resources.OutputTableName
	OutputDashboard   = "DashboardName"
	// Queue URLs are output as <Queue>QueueUrl, e.g. InboundQueueUrl,
	// InboundDlqQueueUrl.
)

// AlarmName is the physical name of an alarm: stack-scoped, so the alarm
// topic's policy can admit exactly this stack's alarms.
func AlarmName(stackName, what string) string { return stackName + "-" + what }

func (s *Stack) monitor(cfg Config) {
	stackName := *s.Stack.StackName()
	s.AlarmTopic = awssns.NewTopic(s.Stack, jsii.String("Alarms"), &awssns.TopicProps{
		DisplayName: jsii.String("Parley alarms (" + stackName + ")"),
		EnforceSSL:  jsii.Bool(true),
	})
	// The enforceSSL topic policy replaces SNS's default policy, so admit
	// CloudWatch explicitly, and only for this stack's alarms in this
	// account (no confused deputy).
	s.AlarmTopic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarmsPublish"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings("sns:Publish"),
		Resources:  jsii.Strings(*s.AlarmTopic.TopicArn()),
		Conditions: &map[string]any{
			"StringEquals": map[string]any{"aws:SourceAccount": awscdk.Aws_ACCOUNT_ID()},
			"ArnLike": map[string]any{"aws:SourceArn": awscdk.Fn_Join(jsii.String(""), &[]*string{
				jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":cloudwatch:"), awscdk.Aws_REGION(),
				jsii.String(":"), awscdk.Aws_ACCOUNT_ID(), jsii.String(":alarm:" + AlarmName(stackName, "*")),
			})},
		},
	}))
	if cfg.AlarmEmail != "" {
		s.AlarmTopic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(cfg.AlarmEmail), nil))
	}
	action := awscloudwatchactions.NewSnsAction(s.AlarmTopic)
	alarm := func(id, what, description string, metric awscloudwatch.IMetric, threshold float64) {
		a := awscloudwatch.NewAlarm(s.Stack, jsii.String(id), &awscloudwatch.AlarmProps{
			AlarmName:          jsii.String(AlarmName(stackName, what)),
			AlarmDescription:   jsii.String(description),
			Metric:             metric,
			Threshold:          jsii.Number(threshold),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			EvaluationPeriods:  jsii.Number(1),
			// SQS and Lambda publish nothing while idle: idle is fine.
			TreatMissingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		a.AddAlarmAction(action)
		a.AddOkAction(action)
	}
	minutes := func(n float64) awscdk.Duration { return awscdk.Duration_Minutes(jsii.Number(n)) }
	maxOver := func(n float64) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: minutes(n)}
	}
	sumOver := func(n float64) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: minutes(n)}
	}

	var depth, dlqDepth, age []awscloudwatch.IMetric
	for _, q := range resources.Queues() {
		main, dlq := s.Queues[q.Name], s.DLQs[q.Name]
		alarm(constructID(q.DLQName())+"NotEmpty", q.DLQName()+"-not-empty",
			"Messages reached the "+q.Name+" dead-letter queue: inspect them, fix the cause, then redrive.",
			dlq.MetricApproximateNumberOfMessagesVisible(maxOver(1)), 0)
		limit := defaultOldestMessageAlarm
		if d, ok := OldestMessageAlarm[q.Name]; ok {
			limit = d
		}
		alarm(constructID(q.Name)+"OldestMessageAge", q.Name+"-oldest-message-age",
			"The oldest message on "+q.Name+" waited longer than "+limit.String()+": its consumer is failing, throttled or blocked on a group.",
			main.MetricApproximateAgeOfOldestMessage(maxOver(1)), limit.Seconds())
		depth = append(depth, main.MetricApproximateNumberOfMessagesVisible(maxOver(1)))
		dlqDepth = append(dlqDepth, dlq.MetricApproximateNumberOfMessagesVisible(maxOver(1)))
		age = append(age, main.MetricApproximateAgeOfOldestMessage(maxOver(1)))
	}

	var errs, throttles, p99, url5xx []awscloudwatch.IMetric
	for _, spec := range registry.Functions() {
		fn, id := s.Functions[spec.Name], constructID(spec.Name)
		alarm(id+"Errors", spec.Name+"-errors",
			"The "+spec.Name+" function failed or timed out: see its log group.",
			fn.MetricErrors(sumOver(5)), 0)
		throttled := "The " + spec.Name + " function was throttled: raise the account's concurrency or lower the event sources' maximum concurrency."
		if spec.Kind == resources.Ingress && *cfg.IngressConcurrency > 0 {
			throttled = "The " + spec.Name + " webhook was throttled at its reserved concurrency (" + ContextIngressConcurrency +
				"): a flood, or more traffic than it allows; the platform retries."
		}
		alarm(id+"Throttles", spec.Name+"-throttles", throttled, fn.MetricThrottles(sumOver(5)), 0)
		errs = append(errs, fn.MetricErrors(sumOver(5)))
		throttles = append(throttles, fn.MetricThrottles(sumOver(5)))
		p99 = append(p99, fn.MetricDuration(&awscloudwatch.MetricOptions{Statistic: jsii.String("p99"), Period: minutes(5)}))
		if spec.Kind == resources.Ingress {
			// A 5xx tells the platform to retry (nothing durable happened),
			// so it is not lost, but it should not happen.
			m := fn.Metric(jsii.String("Url5xxCount"), sumOver(5))
			alarm(id+"Url5xx", spec.Name+"-url-5xx",
				"The "+spec.Name+" webhook answered 5xx: the platform will retry; see its log group for the failed durable step.",
				m, 0)
			url5xx = append(url5xx, m)
		}
	}

	graph := func(title string, metrics []awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
			Title: jsii.String(title), Left: &metrics, Width: jsii.Number(8), Height: jsii.Number(6),
		})
	}
	dash := awscloudwatch.NewDashboard(s.Stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
	})
	dash.AddWidgets(graph("Queue depth (visible)", depth), graph("Oldest message age (s)", age), graph("Dead-letter queue depth", dlqDepth))
	dash.AddWidgets(graph("Function errors", errs), graph("Function throttles", throttles), graph("Duration p99 (ms)", p99))
	dash.AddWidgets(graph("Webhook 5xx", url5xx))

	output := func(id string, value *string, description string) {
		awscdk.NewCfnOutput(s.Stack, jsii.String(id), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(description)})
	}
	output(OutputAlarmTopicARN, s.AlarmTopic.TopicArn(), "SNS topic the alarms notify: subscribe to it")
	if s.AgentSecret != nil {
		output(OutputAgentSecretARN, s.AgentSecret.SecretArn(), "Generated "+resources.SecretAgentSecret+": get-secret-value it and give it to your agent")
	}
	if names := s.OperatorSecretNames(); len(names) > 0 {
		output(OutputSecretNames, jsii.String(strings.Join(names, ",")),
			"Secrets to create, one plain string each, for the platforms you use: aws secretsmanager create-secret --name NAME --secret-string VALUE")
	}
	output(OutputTableName, s.Table.TableName(), "State table")
	output(OutputDashboard, dash.DashboardName(), "CloudWatch dashboard")
	for _, q := range resources.Queues() {
		output(resources.QueueURLOutput(q.Name), s.Queues[q.Name].QueueUrl(), q.Name+" queue")
		output(resources.QueueURLOutput(q.DLQName()), s.DLQs[q.Name].QueueUrl(), q.Name+" dead-letter queue")
	}
	// What the operator CLI (parley --stack) reads besides: each
	// function's physical name (CloudWatch's metrics) and log group (Logs
	// Insights), as name=value pairs.
	var fnNames, logGroups []*string
	for i, spec := range registry.Functions() {
		fn, sep := s.Functions[spec.Name], ""
		if i > 0 {
			sep = ","
		}
		fnNames = append(fnNames, jsii.String(sep+spec.Name+"="), fn.FunctionName())
		logGroups = append(logGroups, jsii.String(sep+spec.Name+"="), fn.LogGroup().LogGroupName())
	}
	output(resources.OutputFunctionNames, awscdk.Fn_Join(jsii.String(""), &fnNames), "Every function, name=function name: parley status reads their errors")
	output(resources.OutputLogGroupNames, awscdk.Fn_Join(jsii.String(""), &logGroups), "Every function's log group, name=log group: parley searches them by correlation id")
}
