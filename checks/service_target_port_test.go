package checks_test

import (
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
)

// TestMixedServiceNarrowed: a Service whose selector spans two workloads,
// one of which does not serve its port, is remediated by a selector that
// keeps the other (the label that tells them apart), not by a new targetPort.
func TestMixedServiceNarrowed(t *testing.T) {
	f := fixtureFinding(t, checks.ServiceTargetPort, "service-target-port", "cachens/service/cache")
	if !hasRemediation(f, "kubectl set selector service cache -n cachens 'app=redis,tier=cache'") {
		t.Errorf("remediation %+v", f.Remediation)
	}
}

// TestMetricsPortNotRetargeted: a port the pods do not declare, with no
// declared port of the same name, is never "fixed" by pointing it at the
// only port they declare (a metrics port at DNS).
func TestMetricsPortNotRetargeted(t *testing.T) {
	f := fixtureFinding(t, checks.ServiceTargetPort, "service-target-port", "tp/service/coredns-metrics")
	for _, r := range f.Remediation {
		if strings.HasPrefix(r.Command, "kubectl patch") {
			t.Errorf("patch offered: %s", r.Command)
		}
	}
	if f := fixtureFinding(t, checks.ServiceTargetPort, "service-target-port", "tp/service/orders"); !hasCommandPrefix(f, "kubectl patch service orders") {
		t.Errorf("orders (named http, declares http 8080): no patch offered: %+v", f.Remediation)
	}
}
