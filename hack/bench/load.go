package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot/synth"
)

// The shape of the default benchmark cluster, the size the scan is tuned
// for: 30,600 pods on 1,000 nodes. -pods and -nodes scale it (shapeFor).
const (
	namespaces  = 50
	nodes       = 1000
	runningPods = 25000
	failedPods  = 5000
	pendingPods = 600
	replicaSets = 1500
	jobs        = 600
	services    = 2000
	events      = 5000
	workers     = 24
)

// shape is the size of a synthetic cluster.
type shape struct {
	nodes, running, failed, pending, replicaSets, jobs, services, events int
}

func (s shape) pods() int { return s.running + s.failed + s.pending }

// shapeFor scales the default cluster to pods pods on n nodes, keeping its
// proportions: 82% Running, 16% Failed OutOfcpu on one node (the storm), the
// rest Pending; one ReplicaSet per ~20 pods, a Job per 51, a Service (and
// EndpointSlice) per ~15, an event per ~6. shapeFor(30600, 1000) is the
// default cluster exactly.
func shapeFor(pods, n int) shape {
	scale := func(x int) int { return max(1, int(int64(x)*int64(pods)/(runningPods+failedPods+pendingPods))) }
	s := shape{nodes: n, running: scale(runningPods), failed: scale(failedPods),
		replicaSets: scale(replicaSets), jobs: scale(jobs), services: scale(services), events: scale(events)}
	s.pending = max(0, pods-s.running-s.failed)
	return s
}

// loadShape creates a synthetic cluster of shape sh with parallel creates
// (protobuf, no client-side rate limit), then writes the status of nodes and
// pods.
func loadShape(ctx context.Context, cfg *rest.Config, sh shape, log io.Writer) error {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = -1, -1
	c.ContentType = "application/vnd.kubernetes.protobuf"
	kube, err := kubernetes.NewForConfig(c)
	if err != nil {
		return err
	}
	now := metav1.Now()
	ns := func(i int) string { return fmt.Sprintf("team-%02d", i%namespaces) }
	steps := []struct {
		name string
		n    int
		do   func(ctx context.Context, i int) error
	}{
		{"namespaces", namespaces, func(ctx context.Context, i int) error {
			_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns(i)}}, metav1.CreateOptions{})
			return err
		}},
		{"nodes", sh.nodes, func(ctx context.Context, i int) error {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i), Labels: map[string]string{
				"kubernetes.io/hostname": fmt.Sprintf("node-%04d", i), "eks.amazonaws.com/nodegroup": fmt.Sprintf("pool-%d", i%10),
				"node.kubernetes.io/instance-type": "m6i.2xlarge"}}}
			n, err := kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			n.Status = corev1.NodeStatus{
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("58")},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7910m"), corev1.ResourceMemory: resource.MustParse("31Gi"), corev1.ResourcePods: resource.MustParse("58")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
					LastHeartbeatTime: now, LastTransitionTime: metav1.NewTime(now.Add(-720 * time.Hour))}},
				NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", KernelVersion: "6.1.102-111.182.amzn2023.x86_64",
					OSImage: "Amazon Linux 2023.5.20240805", ContainerRuntimeVersion: "containerd://1.7.20", Architecture: "amd64", OperatingSystem: "linux"},
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)}},
			}
			_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
			return err
		}},
		{"replicasets", sh.replicaSets, func(ctx context.Context, i int) error {
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%04d-5d8f7c", i), Namespace: ns(i),
				Labels: map[string]string{"app": fmt.Sprintf("app-%04d", i)}, Annotations: map[string]string{"deployment.kubernetes.io/revision": "1"}},
				Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("app-%04d", i)}},
					Template: podTemplate(fmt.Sprintf("app-%04d", i))}}
			_, err := kube.AppsV1().ReplicaSets(ns(i)).Create(ctx, rs, metav1.CreateOptions{})
			return err
		}},
		{"pods", sh.pods(), func(ctx context.Context, i int) error {
			app := i % sh.replicaSets
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%04d-5d8f7c-%06d", app, i), Namespace: ns(app),
				Labels: map[string]string{"app": fmt.Sprintf("app-%04d", app)}}, Spec: podTemplate(fmt.Sprintf("app-%04d", app)).Spec}
			p.Spec.NodeName = fmt.Sprintf("node-%04d", i%sh.nodes)
			switch {
			case i >= sh.running+sh.failed:
				p.Spec.NodeName = ""
				p.Namespace, p.Labels = "pending", map[string]string{"app": "pending"}
				p.Name = fmt.Sprintf("pending-%04d", i)
			case i >= sh.running:
				p.Namespace, p.Labels = "storm", map[string]string{"app": "kube-cert-agent"}
				p.Name = fmt.Sprintf("kube-cert-agent-%05d", i)
				p.Spec.NodeName = "node-0000"
			}
			p, err := kube.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			switch {
			case i < sh.running:
				// What a v1.37 kubelet writes: five conditions, and per
				// container its mounts (the token volume the ServiceAccount
				// admission added), resources and user besides its state.
				ip := fmt.Sprintf("10.244.%d.%d", i/250%250, i%250+1)
				p.Status = synth.RunningStatus(p, ip, now)
			case i < sh.running+sh.failed:
				p.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "OutOfcpu",
					Message: "Pod was rejected: Node didn't have enough resource: cpu, requested: 500, used: 7900, capacity: 7910"}
			default:
				p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
					Reason: "Unschedulable", Message: fmt.Sprintf("0/%d nodes are available: %d Insufficient cpu.", sh.nodes, sh.nodes), LastTransitionTime: now}}}
			}
			_, err = kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return err
		}},
		{"jobs", sh.jobs, func(ctx context.Context, i int) error {
			j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("report-%04d", i), Namespace: ns(i)},
				Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: podTemplate("report")}}
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
			_, err := kube.BatchV1().Jobs(ns(i)).Create(ctx, j, metav1.CreateOptions{})
			return err
		}},
		{"services+endpointslices", sh.services, func(ctx context.Context, i int) error {
			name := fmt.Sprintf("svc-%04d", i)
			_, err := kube.CoreV1().Services(ns(i)).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			ready := true
			_, err = kube.DiscoveryV1().EndpointSlices(ns(i)).Create(ctx, &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Name: name + "-abcde", Labels: map[string]string{"kubernetes.io/service-name": name}},
				AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(8080))}},
				Endpoints: []discoveryv1.Endpoint{{Addresses: []string{fmt.Sprintf("10.244.%d.%d", i/250, i%250+1)}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
			}, metav1.CreateOptions{})
			return err
		}},
		{"events", sh.events, func(ctx context.Context, i int) error {
			reason, kind := "Scheduled", "Pod"
			if i%5 == 0 {
				reason, kind = "FailedCreate", "ReplicaSet"
			}
			_, err := kube.CoreV1().Events(ns(i)).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ev-%05d", i)},
				InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns(i), Name: fmt.Sprintf("app-%04d", i%sh.replicaSets)},
				Reason:         reason, Message: "Successfully assigned pod to node", Type: "Normal", FirstTimestamp: now, LastTimestamp: now, Count: 1}, metav1.CreateOptions{})
			return err
		}},
	}
	for _, extra := range []string{"storm", "pending"} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: extra}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for i, st := range steps {
		if i == 1 {
			// The ServiceAccount admission plugin needs each namespace's
			// default ServiceAccount; no controller makes it here.
			all := []string{"storm", "pending"}
			for j := range namespaces {
				all = append(all, ns(j))
			}
			for _, n := range all {
				if _, err := kube.CoreV1().ServiceAccounts(n).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
					return err
				}
			}
		}
		start := time.Now()
		if err := parallel(ctx, st.n, st.do); err != nil {
			return fmt.Errorf("creating %s: %w", st.name, err)
		}
		fmt.Fprintf(log, "created %d %s in %s\n", st.n, st.name, time.Since(start).Round(time.Second))
	}
	return nil
}

func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{
			// The ServiceAccount admission adds each pod's token volume
			// (kube-api-access-<random>) and its mounts, as in a real cluster.
			Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1.0",
				Env:       []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "REGION", Value: "eu-west-1"}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")}},
				Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			}},
		},
	}
}

func parallel(ctx context.Context, n int, do func(context.Context, int) error) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := do(ctx, i); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}
