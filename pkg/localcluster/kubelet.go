package localcluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// RejectPodsAnnotation on a scenario Node, e.g. "OutOfcpu=250", makes the
// loader act as that node's kubelet: it rejects the next 250 pods bound to
// the node at admission, writing the status a real kubelet writes. Whatever
// recreates them (the ReplicaSet controller, with no backoff) is real.
const RejectPodsAnnotation = "scenario.doctor.test/reject-pods"

// admissionMessages are what the kubelet's admission writes per reason
// (pkg/kubelet/lifecycle/predicate.go).
var admissionMessages = map[string]string{
	"OutOfcpu":     "Pod was rejected: Node didn't have enough resource: cpu, requested: 500, used: 1950, capacity: 2000",
	"OutOfmemory":  "Pod was rejected: Node didn't have enough resource: memory, requested: 268435456, used: 8053063680, capacity: 8192000000",
	"NodeAffinity": "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
}

// RejectPods rejects pods bound to node until count have been rejected,
// returning how many it rejected. spec is "REASON=COUNT".
func RejectPods(ctx context.Context, kube kubernetes.Interface, node, spec string) (int, error) {
	reason, n, ok := strings.Cut(spec, "=")
	count, err := strconv.Atoi(n)
	msg, known := admissionMessages[reason]
	if !ok || err != nil || !known {
		return 0, fmt.Errorf("%s %q: want REASON=COUNT with REASON one of OutOfcpu, OutOfmemory, NodeAffinity", RejectPodsAnnotation, spec)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	rejected := 0
	for rejected < count {
		pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node + ",status.phase=Pending"})
		if err != nil {
			return rejected, fmt.Errorf("kubelet of %s: %w", node, err)
		}
		for i := range pods.Items {
			if rejected == count {
				break
			}
			p := &pods.Items[i]
			p.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: reason, Message: msg, StartTime: &metav1.Time{Time: time.Now()}}
			if _, err := kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
				continue // recreated or changed meanwhile: the next list sees it again
			}
			rejected++
		}
		if len(pods.Items) == 0 {
			select {
			case <-ctx.Done():
				return rejected, fmt.Errorf("kubelet of %s: only %d of %d pods arrived: %w", node, rejected, count, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return rejected, nil
}
