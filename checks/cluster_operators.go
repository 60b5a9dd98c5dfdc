package checks

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// ClusterOperators reports OpenShift's own verdicts on its platform: the
// ClusterOperators that say their component is unavailable, degraded or
// blocks upgrades, and a ClusterVersion that fails to apply its release,
// quoting the operator's reason and message. On other distributions the
// API is not served and the check passes with nothing to judge.
var ClusterOperators = &doctor.Check{
	Name:     "cluster-operators",
	Severity: doctor.Warning,
	Origin:   "OpenShift must-gathers",
	Reads:    []snapshot.Resource{snapshot.ClusterOperators},
	Optional: []snapshot.Resource{snapshot.ClusterVersions},
	Run:      runClusterOperators,
	Doc: `OpenShift cluster operators that are unavailable, degraded or block upgrades, in their own words

## Why it matters
On OpenShift every platform component — the API servers, etcd, ingress,
DNS, the network, monitoring, the image registry, authentication — is run by
an operator that publishes its verdict on a ClusterOperator object:
` + "`Available`" + ` (the component serves), ` + "`Degraded`" + ` (it does not match its desired
state: a router that cannot be scheduled, an etcd member down, a certificate
about to expire), ` + "`Progressing`" + ` and ` + "`Upgradeable`" + `. These operators know their
component far better than any generic rule: their reason and message usually
name the exact cause. The ClusterVersion says whether the cluster version
operator can apply its release (` + "`Failing`" + `); an update stalls behind one
degraded operator. A must-gather carries all of them
(` + "`cluster-scoped-resources/config.openshift.io/`" + `), so a support engineer reading
a capture sees the platform's own diagnosis first.

## How it is detected
From one LIST of ` + "`clusteroperators.config.openshift.io`" + ` and one of
` + "`clusterversions.config.openshift.io`" + ` (an API only OpenShift serves: elsewhere
the lists are empty and the check passes; from a capture without them it is
skipped). One finding per operator, its conditions combined, with how long
each has held (from ` + "`lastTransitionTime`" + `) and the operator's reason and message
quoted (whitespace folded, cut at 480 characters):
- ` + "`Available=False`" + `: critical — the component does not serve;
- ` + "`Degraded=True`" + ` (and Available): warning;
- ` + "`Upgradeable=False`" + ` alone: info — nothing is broken, but the next minor
  update is blocked until the cause (often an unsupported config override) is
  removed.

` + "`Unknown`" + ` conditions and operators that have not reported yet are not judged.
The ClusterVersion's ` + "`Failing=True`" + ` is a warning naming the release it cannot
apply; when its reason blames cluster operators that are reported above
(` + "`ClusterOperatorDegraded`" + `, ` + "`ClusterOperatorNotAvailable`" + `...), it is folded into
an info line pointing at them instead of repeating the cause.

## How to fix
Follow the quoted message: it names the failing object. Inspect the operator
(` + "`kubectl get clusteroperator NAME -o yaml`" + `, or ` + "`oc describe co NAME`" + `) and the pods
of the namespaces it lists in ` + "`status.relatedObjects`" + ` (the remediation names
them), then their logs and events. For Upgradeable=False caused by
` + "`unsupportedConfigOverrides`" + `, remove the override from the operator's config
before updating.

## References
- https://docs.openshift.com/container-platform/latest/support/troubleshooting/troubleshooting-operator-issues.html
- https://github.com/openshift/api/blob/master/config/v1/types_cluster_operator.go
- https://github.com/openshift/enhancements/blob/master/dev-guide/cluster-version-operator/dev/clusteroperator.md`,
}

// platformMessageLimit bounds a quoted operator message.
const platformMessageLimit = 480

// quotePlatform is an OpenShift operator's reason and message: as
// quoteReason, but a long message is cut at its end, not in its middle:
// operators put the cause first and then list every other degraded
// condition (an Insights archive's ingress operator names the unschedulable
// router and why within its first 300 characters, then 900 more).
func quotePlatform(reason, msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if r := []rune(msg); len(r) > platformMessageLimit {
		msg = string(r[:platformMessageLimit]) + "…"
	}
	var out string
	if reason != "" {
		out = " (" + reason + ")"
	}
	if msg != "" {
		out += fmt.Sprintf(": %q", msg)
	}
	return out
}

// quoteReason is a controller's reason and message as a finding quotes them
// (cert-manager's, Flux's, ESO's): ` (Reason):
// "message"`, whitespace folded, a long message cut in the middle (quote).
func quoteReason(reason, msg string) string {
	var out string
	if reason != "" {
		out = " (" + reason + ")"
	}
	if strings.TrimSpace(msg) != "" {
		out += ": " + quote(msg)
	}
	return out
}

// heldFor is " for 2h" since a condition's last transition, "" when the
// transition is not before now (a capture's clock is a lower bound).
func heldFor(now time.Time, c *snapshot.PlatformCondition) string {
	if c.LastTransitionTime.IsZero() || !c.LastTransitionTime.Time.Before(now) {
		return ""
	}
	return forDuration(now, c.LastTransitionTime)
}

func platformCondition(conds []snapshot.PlatformCondition, typ string) *snapshot.PlatformCondition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func runClusterOperators(p *doctor.Pass) error {
	ops := p.Snapshot.ClusterOperators()
	sort.Slice(ops, func(i, j int) bool { return ops[i].Name < ops[j].Name })
	var reported []string
	for i := range ops {
		if reportClusterOperator(p, &ops[i]) {
			reported = append(reported, ops[i].Name)
		}
	}
	for i := range p.Snapshot.ClusterVersions() {
		reportClusterVersion(p, &p.Snapshot.ClusterVersions()[i], reported)
	}
	return nil
}

// reportClusterOperator reports one operator's failing conditions as one
// finding; it says whether there was one at warning or above.
func reportClusterOperator(p *doctor.Pass, co *snapshot.ClusterOperator) bool {
	conds := co.Status.Conditions
	avail, degraded, upgradeable := platformCondition(conds, "Available"), platformCondition(conds, "Degraded"), platformCondition(conds, "Upgradeable")
	var parts []string
	sev := doctor.Severity(0)
	if avail != nil && avail.Status == "False" {
		sev = doctor.Critical
		parts = append(parts, "is not available"+heldFor(p.Now, avail)+quotePlatform(avail.Reason, avail.Message))
	}
	if degraded != nil && degraded.Status == "True" {
		if sev == 0 {
			sev = doctor.Warning
		}
		parts = append(parts, "is degraded"+heldFor(p.Now, degraded)+quotePlatform(degraded.Reason, degraded.Message))
	}
	blocks := upgradeable != nil && upgradeable.Status == "False"
	if blocks {
		what := "blocks minor upgrades"
		if sev == 0 {
			sev = doctor.Info
		} else {
			what = "and it blocks minor upgrades"
		}
		parts = append(parts, what+quotePlatform(upgradeable.Reason, upgradeable.Message))
	}
	if sev == 0 {
		return false
	}
	msg := "cluster operator " + co.Name + " " + strings.Join(parts, "; ")
	if v := operatorVersion(co); v != "" {
		msg += " (operator version " + v + ")"
	}
	rem := []doctor.Remediation{{
		Text:    fmt.Sprintf("read the operator's conditions and related objects (oc describe clusteroperator %s)", co.Name),
		Command: fmt.Sprintf("kubectl get clusteroperator %s -o yaml", co.Name),
	}}
	for _, ns := range relatedNamespaces(co) {
		rem = append(rem, doctor.Remediation{
			Text:    fmt.Sprintf("look at the pods and warning events of %s, a namespace the operator lists as its own", ns),
			Command: fmt.Sprintf("kubectl get pods -n %s -o wide; kubectl get events -n %s --field-selector type=Warning", ns, ns),
		})
	}
	if blocks && sev == doctor.Info && strings.Contains(upgradeable.Reason, "UnsupportedConfigOverrides") {
		rem = append(rem, doctor.Remediation{Text: "remove spec.unsupportedConfigOverrides from the operator's config (an operator.openshift.io object named cluster) before the next minor update"})
	}
	p.Report(doctor.Finding{
		Severity:    sev,
		Object:      doctor.ObjectRef{APIVersion: "config.openshift.io/v1", Kind: "ClusterOperator", Name: co.Name},
		Message:     msg,
		Remediation: rem,
	})
	return sev >= doctor.Warning
}

// operatorVersion is the version the operator reports for itself.
func operatorVersion(co *snapshot.ClusterOperator) string {
	for _, v := range co.Status.Versions {
		if v.Name == "operator" {
			return v.Version
		}
	}
	return ""
}

var sharedPlatformNamespaces = map[string]bool{"openshift-config": true, "openshift-config-managed": true, "openshift": true, "kube-system": true}

// relatedNamespaces are the namespaces an operator lists as its own, at
// most two, its operator namespace (openshift-*-operator) first.
func relatedNamespaces(co *snapshot.ClusterOperator) []string {
	var out []string
	for _, o := range co.Status.RelatedObjects {
		if o.Resource == "namespaces" && o.Group == "" && o.Name != "" {
			out = append(out, o.Name)
		}
	}
	// Shared configuration namespaces are listed by many operators and say
	// nothing of this one's component.
	own := slices.DeleteFunc(slices.Clone(out), func(ns string) bool { return sharedPlatformNamespaces[ns] })
	if len(own) > 0 {
		out = own
	}
	sort.SliceStable(out, func(i, j int) bool {
		return strings.HasSuffix(out[i], "-operator") && !strings.HasSuffix(out[j], "-operator")
	})
	return clip(out, 2)
}

// reportClusterVersion reports a ClusterVersion that cannot apply its
// release. When it blames operators already reported, it points at them.
func reportClusterVersion(p *doctor.Pass, cv *snapshot.ClusterVersion, reported []string) {
	failing := platformCondition(cv.Status.Conditions, "Failing")
	avail := platformCondition(cv.Status.Conditions, "Available")
	if (failing == nil || failing.Status != "True") && (avail == nil || avail.Status != "False") {
		return
	}
	target := cv.Status.Desired.Version
	updating := len(cv.Status.History) > 0 && cv.Status.History[0].State == "Partial"
	what := "the cluster version operator"
	switch {
	case updating && target != "":
		what += " updating to " + target
	case target != "":
		what += " at " + target
	}
	sev, msg := doctor.Warning, ""
	if failing != nil && failing.Status == "True" {
		msg = what + " fails to apply the release" + heldFor(p.Now, failing) + quotePlatform(failing.Reason, failing.Message)
		if strings.HasPrefix(failing.Reason, "ClusterOperator") && len(reported) > 0 {
			// The operators its message names, if it names any reported.
			var named []string
			words := map[string]bool{}
			for _, w := range operatorNameRE.FindAllString(failing.Message, -1) {
				words[w] = true
			}
			for _, name := range reported {
				if words[name] {
					named = append(named, name)
				}
			}
			if len(named) > 0 {
				reported = named
			}
			sev = doctor.Info
			msg += fmt.Sprintf("; the cause is the cluster %s reported here: %s",
				map[bool]string{true: "operator", false: "operators"}[len(reported) == 1], strings.Join(doctor.Examples(reported), ", "))
		}
	}
	if avail != nil && avail.Status == "False" {
		sev = doctor.Critical
		if msg != "" {
			msg += "; "
		}
		msg += what + " is not available" + quotePlatform(avail.Reason, avail.Message)
	}
	p.Report(doctor.Finding{
		Severity: sev,
		Object:   doctor.ObjectRef{APIVersion: "config.openshift.io/v1", Kind: "ClusterVersion", Name: cv.Name},
		Message:  msg,
		Remediation: []doctor.Remediation{
			{Text: "read the update's conditions and history (oc adm upgrade)", Command: fmt.Sprintf("kubectl get clusterversion %s -o yaml", cv.Name)},
			{Text: "list the operators that are not available or degraded", Command: "kubectl get clusteroperators"},
		},
	})
}

// operatorNameRE finds the names in a ClusterVersion message ("Cluster
// operators etcd, kube-apiserver are degraded"): DNS-label words.
var operatorNameRE = regexp.MustCompile(`[a-z0-9][a-z0-9.-]*[a-z0-9]`)
