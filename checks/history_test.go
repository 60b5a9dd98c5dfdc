package checks_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// TestHistories rebuilds revisions the way kubectl rollout history does:
// ReplicaSets by revision annotation, ControllerRevisions by number.
func TestHistories(t *testing.T) {
	var got []string
	for _, h := range kube.Histories(fixtureSnapshot(t, "rollout-history")) {
		for _, r := range h.Revisions {
			got = append(got, fmt.Sprintf("%s/%s %d %q %s", h.Namespace, h.Ref(), r.Revision, r.ChangeCause, strings.Join(r.Images, ",")))
		}
	}
	want := []string{
		`charts/deployment/grafana 3 "" grafana/grafana:11.0.0`,
		`charts/deployment/pg-pooler 2 "" cnpg/pgbouncer:1.23`,
		`kube-system/deployment/coredns 1 "k3s v1.33.4" rancher/mirrored-coredns-coredns:1.12.0`,
		`kube-system/deployment/kube-dns-autoscaler 1 "addons 1.33" registry.k8s.io/cpa/cluster-proportional-autoscaler:v1.9.0`,
		`ops/daemonset/node-agent 1 "agent 1.1" ops/agent:1.1`,
		`ops/daemonset/node-agent 2 "" ops/agent:1.2`,
		`ops/deployment/cron-runner 1 "" ops/runner:7`,
		`shop/deployment/api 4 "api v4" shop/api:4`,
		`shop/deployment/cart 2 "cart 2 canary" shop/cart:2`,
		`shop/deployment/checkout 1 "checkout v1" shop/checkout:1`,
		`shop/deployment/checkout 2 "checkout v2" shop/checkout:2`,
		`shop/deployment/search 1 "search 5" shop/search:5`,
		`shop/deployment/web 1 "initial release" shop/web:1.1`,
		`shop/deployment/web 2 "" shop/web:1.2`,
		`shop/deployment/web 3 "bump to 1.3 (TICKET-42)" shop/web:1.3`,
		`shop/statefulset/db 1 "postgres 17" postgres:17`,
		`stream/statefulset/kafka 1 "kafka 3.8.1" kafka:3.8.1`,
		`stream/statefulset/kafka 2 "kafka 3.9.0" kafka:3.9.0`,
		`stream/statefulset/zk 1 "zk 3.9.2" zookeeper:3.9.2`,
		`stream/statefulset/zk 2 "zk 3.9.3" zookeeper:3.9.3`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("histories:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOnDeleteNextPod: an OnDelete StatefulSet's pending template change
// is rolled from the highest ordinal that does not run it yet (kafka-2 was
// rolled by hand: kafka-1 is next).
func TestOnDeleteNextPod(t *testing.T) {
	f := fixtureFinding(t, checks.RolloutHistory, "rollout-history", "stream/statefulset/kafka")
	if !hasRemediation(f, "kubectl delete pod kafka-1 -n stream") {
		t.Errorf("remediation %+v", f.Remediation)
	}
}
