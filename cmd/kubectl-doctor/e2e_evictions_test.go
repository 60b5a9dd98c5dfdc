package main_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/localcluster"
)

// cartEvictions is how many of cart's pods the test evicts as the kubelet's
// eviction manager would: "dozens", so a warning although cart ends healthy.
const cartEvictions = 24

// cartMessage is what the eviction manager writes (pkg/kubelet/eviction:
// nodeLowMessageFmt, thresholdMetMessageFmt, containerMessageFmt).
const cartMessage = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 91396Ki. Container app was using 1532812Ki, request is 128Mi, has larger consumption of memory. "

// TestEvictionsAndVolumeTopology runs on a control plane of its own
// (testdata/e2e/evictions): the real Deployment, ReplicaSet and StatefulSet
// controllers, with the test acting as the kubelet that evicts cart's pods
// and then runs the last two Ready. It asserts each cause (the eviction's
// resource and figures, a volume in a zone without nodes, a class allowed
// only there, a NotReady node's taint folded into node-health) and each
// silence (an old eviction, a drain, a pod on its zonal volume, the stale
// taint left as node-taints' own finding).
func TestEvictionsAndVolumeTopology(t *testing.T) {
	needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	bins, err := localcluster.Build(ctx, root, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	c, err := localcluster.Start(ctx, bins, localcluster.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if err := c.StartControllerManager("deployment", "replicaset", "statefulset", "serviceaccount", "namespace"); err != nil {
		t.Fatal(err)
	}
	if err := load(ctx, c, filepath.Join(root, "testdata", "e2e", "evictions")); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	evictCart(ctx, t, kube)

	rep := decodeReport(t, runDoctor(t, c.Kubeconfig, "-o", "json", "--check", "pod-storm,unschedulable,node-health,node-taints").stdout)
	got := map[string]doctor.Finding{}
	for _, f := range rep.Findings {
		got[f.Check+" "+f.Object.String()] = f
	}
	for key, want := range map[string]struct {
		sev doctor.Severity
		msg string
	}{
		"pod-storm ev-shop/deployment/cart":   {doctor.Warning, fmt.Sprintf(`^%d pods evicted on node ev-w1 (\d+s ago|between \d+[sm]\d*s? and \d+s ago): node short of memory ×%d \(newest: threshold 100Mi, 91396Ki left; container app used 1532812Ki with a request of 128Mi\); memory: app requests 128Mi; 2 of 2 replicas available now$`, cartEvictions, cartEvictions)},
		"pod-storm ev-shop/statefulset/kafka": {doctor.Warning, `^21 pods evicted on node ev-w2 between 10\dm and [5-9]m\d*s? ago: container broker over its ephemeral-storage limit 2Gi ×21 \(counted from the kubelet's Evicted events: the pods were deleted and recreated\)$`},
		"unschedulable ev-data/pod/db-0":      {doctor.Warning, `^pod db-0 in namespace ev-data pending for [23]\dm: its volume ev-pv-db \(claim data-db-0\) can only be used on nodes with topology\.kubernetes\.io/zone=zone-c \(node affinity\), and no node is there \(nodes have topology\.kubernetes\.io/zone=zone-a, zone-b\)$`},
		"unschedulable ev-data/pod/uploader":  {doctor.Warning, `^pod uploader in namespace ev-data pending for [23]\dm: its claim scratch \(storageclass ev-zonal-c\) can only be used on nodes with topology\.kubernetes\.io/zone=zone-c \(allowedTopologies\), and no node is there`},
		"node-health node/ev-sick":            {doctor.Critical, `^node ev-sick has been NotReady for [34]\dm: the kubelet reports "container runtime is down"`},
		"node-taints node/ev-stale":           {doctor.Warning, `^node ev-stale is tainted node\.kubernetes\.io/disk-pressure:NoSchedule, but the node no longer reports DiskPressure: the taint outlived the condition behind it`},
	} {
		f, ok := got[key]
		if !ok {
			t.Errorf("%s: no finding", key)
			continue
		}
		if f.Severity != want.sev || !regexp.MustCompile(want.msg).MatchString(f.Message) {
			t.Errorf("%s = %s: %s\nwant %s: /%s/", key, f.Severity, f.Message, want.sev, want.msg)
		}
	}
	// One NotReady node is one finding: the taint's is folded into node-health's.
	if f := got["node-health node/ev-sick"]; len(f.Explains) != 1 || !strings.HasPrefix(f.Explains[0], "node-taints node/ev-sick: node ev-sick is tainted node.kubernetes.io/not-ready") {
		t.Errorf("node-health ev-sick explains %q, want the not-ready taint", f.Explains)
	}
	if f, ok := got["node-taints node/ev-sick"]; ok {
		t.Errorf("the not-ready taint reported twice: %s", f.Message)
	}
	if f := got["pod-storm ev-shop/deployment/cart"]; len(f.Evidence) != 1 || !strings.Contains(f.Evidence[0], "The node was low on resource: memory.") ||
		!hasCommand(f, "kubectl set resources deployment/cart -n ev-shop --requests=memory=<usage>") {
		t.Errorf("cart: evidence %q, remediation %+v", f.Evidence, f.Remediation)
	}
	if f := got["unschedulable ev-data/pod/db-0"]; !hasCommand(f, "kubectl get pv ev-pv-db -o yaml") || !hasCommand(f, "kubectl get nodes -L topology.kubernetes.io/zone") {
		t.Errorf("db-0 remediation %+v", f.Remediation)
	}
	// Silences: the old eviction, the drain, the pod on its zonal volume.
	for _, f := range rep.Findings {
		for _, quiet := range []string{"old-batch", "drained", "ok-runner", "namespace/ev-shop", "ev-w1", "ev-w2"} {
			if strings.HasSuffix(f.Object.String(), quiet) {
				t.Errorf("look-alike %s reported by %s: %s", quiet, f.Check, f.Message)
			}
		}
	}
	// Without node-health the taint's finding stands on its own.
	alone := decodeReport(t, runDoctor(t, c.Kubeconfig, "-o", "json", "--check", "node-taints").stdout)
	found := false
	for _, f := range alone.Findings {
		found = found || f.Object.Name == "ev-sick"
	}
	if !found {
		t.Errorf("node-taints alone lost the not-ready taint: %+v", alone.Findings)
	}
	// The table keeps the evidence indented under the finding, at most three lines.
	table := runDoctor(t, c.Kubeconfig, "--check", "pod-storm")
	if !regexp.MustCompile(`(?m)^\s{2,}.*Evicted ev-shop/cart-`).MatchString(table.stdout) {
		t.Errorf("table lacks cart's indented evidence:\n%s", table.stdout)
	}
}

// evictCart acts as ev-w1's kubelet: it evicts cart's pods for memory
// pressure, writing the status and DisruptionTarget condition the eviction
// manager writes, while the ReplicaSet controller recreates them; then it
// runs the last two Ready, so the Deployment controller counts them available.
func evictCart(ctx context.Context, t *testing.T, kube kubernetes.Interface) {
	t.Helper()
	evicted := 0
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.CoreV1().Pods("ev-shop").List(ctx, metav1.ListOptions{LabelSelector: "app=cart"})
		if err != nil {
			return false, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Status.Phase == corev1.PodFailed || evicted == cartEvictions {
				continue
			}
			now := metav1.Now()
			p.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: cartMessage, StartTime: &now,
				Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet",
					Message: cartMessage, LastTransitionTime: now}}}
			if _, err := kube.CoreV1().Pods("ev-shop").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err == nil {
				evicted++
			}
		}
		return evicted == cartEvictions, nil
	})
	if err != nil {
		t.Fatalf("evicted %d of %d cart pods: %v", evicted, cartEvictions, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.CoreV1().Pods("ev-shop").List(ctx, metav1.ListOptions{LabelSelector: "app=cart"})
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range pods.Items {
			p := &pods.Items[i]
			switch {
			case p.Status.Phase == corev1.PodFailed:
			case p.Status.Phase == corev1.PodRunning:
				ready++
			default:
				now := metav1.Now()
				p.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now,
					Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "shop/cart:3", Ready: true,
						State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
				if _, err := kube.CoreV1().Pods("ev-shop").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err == nil {
					ready++
				}
			}
		}
		if ready < 2 {
			return false, nil
		}
		d, err := kube.AppsV1().Deployments("ev-shop").Get(ctx, "cart", metav1.GetOptions{})
		return err == nil && d.Status.AvailableReplicas == 2, err
	})
	if err != nil {
		t.Fatalf("cart never became available again: %v", err)
	}
}
