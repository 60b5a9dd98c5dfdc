package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClassifyPull(t *testing.T) {
	for _, tc := range []struct {
		reason, msg string
		want        PullFailure
	}{
		{"ErrImagePull", `rpc error: code = NotFound desc = failed to pull and unpack image "r.example.com/a:2": failed to resolve reference "r.example.com/a:2": r.example.com/a:2: not found`, PullNotFound},
		{"ErrImagePull", `Error response from daemon: manifest for nginx:nope not found: manifest unknown: manifest unknown`, PullNotFound},
		{"ErrImagePull", `pull access denied for nosuchrepo, repository does not exist or may require 'docker login': denied: requested access to the resource is denied`, PullAmbiguous},
		{"ErrImagePull", `failed to pull and unpack image "docker.io/library/redis:7": failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/redis/manifests/sha256:ab: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.`, PullRateLimited},
		{"ErrImagePull", `failed to authorize: failed to fetch oauth token: unexpected status from GET request to https://r.example.com/token: 401 Unauthorized`, PullAccessDenied},
		{"ImagePullBackOff", `Back-off pulling image "gcr.io/p/a:1": ErrImagePull: 403 Forbidden`, PullAccessDenied},
		{"ErrImagePull", `dial tcp: lookup registry.internal on 10.96.0.10:53: no such host`, PullUnreachable},
		{"ErrImagePull", `Get "https://r.example.com/v2/": net/http: TLS handshake timeout`, PullUnreachable},
		// The registry answers; its certificate is not trusted, or it is not TLS.
		{"ErrImagePull", `failed to pull and unpack image "harbor.corp.local/app/web:2": failed to resolve reference "harbor.corp.local/app/web:2": failed to do request: Head "https://harbor.corp.local/v2/app/web/manifests/2": tls: failed to verify certificate: x509: certificate signed by unknown authority`, PullTLS},
		{"ErrImagePull", `failed to do request: Head "https://10.0.0.5:5000/v2/web/manifests/1": http: server gave HTTP response to HTTPS client`, PullTLS},
		{"InvalidImageName", `Failed to apply default image tag "Nginx:Latest": couldn't parse image name`, PullInvalidName},
		{"ImagePullBackOff", `Back-off pulling image "a:1"`, PullUnknown},
		// No build for the node's platform: containerd, Docker, CRI-O.
		{"ErrImagePull", `failed to pull and unpack image "r.example.com/a:1": no match for platform in manifest: not found`, PullPlatform},
		{"ErrImagePull", `Error response from daemon: no matching manifest for linux/arm64/v8 in the manifest list entries`, PullPlatform},
		{"ErrImagePull", `choosing image instance: no image found in manifest list for architecture arm64, variant "v8", OS linux`, PullPlatform},
	} {
		if got := ClassifyPull(tc.reason, tc.msg); got != tc.want {
			t.Errorf("ClassifyPull(%s, %q) = %d, want %d", tc.reason, tc.msg, got, tc.want)
		}
	}
}

func TestMissingConfig(t *testing.T) {
	for _, tc := range []struct{ msg, kind, name, key string }{
		{`configmap "app-config" not found`, "ConfigMap", "app-config", ""},
		{`secret "db" not found`, "Secret", "db", ""},
		{`couldn't find key password in Secret shop/db-creds`, "Secret", "db-creds", "password"},
		{`couldn't find key LOG_LEVEL in ConfigMap shop/app`, "ConfigMap", "app", "LOG_LEVEL"},
		{`container has runAsNonRoot and image will run as root`, "", "", ""},
	} {
		kind, name, key := MissingConfig(tc.msg)
		if kind != tc.kind || name != tc.name || key != tc.key {
			t.Errorf("MissingConfig(%q) = %s %s %s, want %s %s %s", tc.msg, kind, name, key, tc.kind, tc.name, tc.key)
		}
	}
}

// TestPodProblemsQuiet: what must not be a problem.
func TestPodProblemsQuiet(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	running := func(ready bool, started time.Duration, restarts int32, last *corev1.ContainerStateTerminated) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "app", Ready: ready, RestartCount: restarts,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(started)}}, LastTerminationState: corev1.ContainerState{Terminated: last}}
	}
	for name, tc := range map[string]struct {
		pod  corev1.Pod
		want Cause
	}{
		"restarted days ago, ready since": {corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			running(true, 72*time.Hour, 5, &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: ago(72 * time.Hour)})}}}, ""},
		"OOM-killed again ten minutes ago": {corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			running(true, 10*time.Minute, 6, &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: ago(10 * time.Minute)})}}}, OOMKill},
		"not ready for a minute": {corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			running(false, time.Minute, 0, nil)}}}, ""},
		"not ready for ten minutes": {corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			running(false, 10*time.Minute, 0, nil)}}}, NotReady},
		"succeeded": {corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}}, ""},
		"crash loop": {corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}}, CrashLoop},
	} {
		got := PodProblems(&tc.pod, now)
		var cause Cause
		if len(got) > 0 {
			cause = got[0].Cause
		}
		if cause != tc.want {
			t.Errorf("%s: %v, want %q", name, got, tc.want)
		}
	}
}

// TestNotReadySince pins when a pod stopped being ready: the Ready
// condition's transition to not True, else its start, else its creation;
// zero for a ready pod. A container's start never moves it.
func TestNotReadySince(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 6, 1, 11, m, 0, 0, time.UTC) }
	pod := func(created int, started int, conds ...corev1.PodCondition) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at(created))}}
		if started > 0 {
			s := metav1.NewTime(at(started))
			p.Status.StartTime = &s
		}
		p.Status.Conditions = conds
		// A container that restarted later than the pod lost readiness.
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at(50))}}}}
		return p
	}
	ready := func(s corev1.ConditionStatus, m int) corev1.PodCondition {
		c := corev1.PodCondition{Type: corev1.PodReady, Status: s}
		if m > 0 {
			c.LastTransitionTime = metav1.NewTime(at(m))
		}
		return c
	}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want time.Time
	}{
		{"ready", pod(1, 2, ready(corev1.ConditionTrue, 5)), time.Time{}},
		{"not ready: the transition", pod(1, 2, ready(corev1.ConditionFalse, 30)), at(30)},
		{"unknown counts as not ready", pod(1, 2, ready(corev1.ConditionUnknown, 20)), at(20)},
		{"undated condition: the start", pod(1, 2, ready(corev1.ConditionFalse, 0)), at(2)},
		{"no condition: the start", pod(1, 2), at(2)},
		{"not started: the creation", pod(1, 0), at(1)},
	} {
		if got := NotReadySince(c.pod); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
