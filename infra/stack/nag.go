package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// Checks is the cdk-nag pack every synthesis runs (main.go and the tests):
// AWS Solutions, verbose so a finding names its rule's explanation.
func Checks() awscdk.IAspect {
	return cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)})
}

// suppress records why a cdk-nag rule does not apply to construct (and its
// children), optionally only to the findings in appliesTo.
func suppress(construct any, rule, reason string, appliesTo ...string) {
	sup := &cdknag.NagPackSuppression{Id: jsii.String(rule), Reason: jsii.String(reason)}
	if len(appliesTo) > 0 {
		at := make([]any, len(appliesTo))
		for i, a := range appliesTo {
			at[i] = a
		}
		sup.AppliesTo = &at
	}
	cdknag.NagSuppressions_AddResourceSuppressions(construct, &[]*cdknag.NagPackSuppression{sup}, jsii.Bool(true))
}

// suppressMatching is suppress for the findings an ECMA-262 regex matches,
// where a finding names a logical id the code does not spell.
func suppressMatching(construct any, rule, reason, regex string) {
	sup := &cdknag.NagPackSuppression{Id: jsii.String(rule), Reason: jsii.String(reason),
		AppliesTo: &[]any{&cdknag.RegexAppliesTo{Regex: jsii.String(regex)}}}
	cdknag.NagSuppressions_AddResourceSuppressions(construct, &[]*cdknag.NagPackSuppression{sup}, jsii.Bool(true))
}
