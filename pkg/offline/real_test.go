package offline_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/offline"
)

// TestRealSupportBundles runs every check on excerpts of support bundles
// written by troubleshoot.sh on real clusters (testdata/offline/README.md
// names their sources) and pins what docs/offline.md reports on them.
func TestRealSupportBundles(t *testing.T) {
	for _, tc := range []struct {
		path, version string
		now           time.Time
		objects       int
		passed        []string
	}{
		{"sbctl-support-bundle", "v1.23.5", time.Date(2022, 4, 12, 0, 56, 6, 0, time.UTC), 18,
			[]string{"controllers-stalled", "job-backlog", "job-failed", "namespace-stuck-terminating", "node-drift", "node-health", "node-pod-capacity", "node-taints",
				"pending-taints", "pod-storm", "pods-stuck", "pvc-pending", "replica-failure", "rollout-history", "runtime-socket", "sandbox-failures", "unschedulable", "workload-pods"}},
		{"troubleshoot-support-bundle.tar.gz", "v1.24.4+k3s1", time.Date(2022, 12, 21, 16, 43, 9, 0, time.UTC), 40,
			[]string{"controllers-stalled", "job-backlog", "job-failed", "namespace-stuck-terminating", "node-drift", "node-health", "node-pod-capacity", "node-taints",
				"pdb-blocks-drain", "pending-taints", "pod-storm", "pods-stuck", "pvc-pending", "replica-failure", "rollout-history", "runtime-socket", "sandbox-failures", "unschedulable", "workload-pods"}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res := mustLoad(t, filepath.Join("..", "..", "testdata", "offline", tc.path), offline.Options{})
			if res.Format != offline.FormatBundle || res.Snapshot.ServerVersion != tc.version || !res.Now.Equal(tc.now) || res.Stats.Objects != tc.objects {
				t.Errorf("format %q, version %q, now %s, %d objects", res.Format, res.Snapshot.ServerVersion, res.Now, res.Stats.Objects)
			}
			r := doctor.Run(context.Background(), res.Snapshot, checks.All(), res.Now)
			passed := map[string]bool{}
			for _, c := range r.Checks {
				switch c.Status {
				case doctor.StatusPassed, doctor.StatusFailed: // ran, possibly without optional reads
					passed[c.Name] = true
				case doctor.StatusSkipped:
					if len(c.Reason) < len("not in the dump: ") || c.Reason[:len("not in the dump: ")] != "not in the dump: " {
						t.Errorf("%s skipped for another reason: %s", c.Name, c.Reason)
					}
				default:
					t.Errorf("%s: %s %s", c.Name, c.Status, c.Reason)
				}
			}
			for _, name := range tc.passed {
				if !passed[name] {
					t.Errorf("%s did not pass", name)
				}
			}
			if len(passed) != len(tc.passed) {
				t.Errorf("passed %v, want %v", passed, tc.passed)
			}
			// docs/offline.md: no findings on these captures (judged there)
			// but rollout-history's note that the workloads record no
			// change-cause, which is true of them.
			for _, f := range r.Findings {
				if f.Check != "rollout-history" || f.Severity != doctor.Info || !strings.Contains(f.Message, "no kubernetes.io/change-cause annotation") {
					t.Errorf("unexpected finding %s %s: %s", f.Severity, f.Object, f.Message)
				}
			}
		})
	}
}

// TestRealOldSupportBundle reads a whole bundle troubleshoot.sh v0.10 wrote
// in March 2021 on a k3s node, whose lists are bare JSON arrays without
// apiVersion and kind: the objects are typed by their files' paths, and the
// failures the capture holds are each one finding naming its cause
// (testdata/offline/README.md names the source).
func TestRealOldSupportBundle(t *testing.T) {
	res := mustLoad(t, filepath.Join("..", "..", "testdata", "offline", "troubleshoot-2021-support-bundle.tar.gz"), offline.Options{})
	if res.Format != offline.FormatBundle || res.Stats.Typed < 500 || res.Stats.Objects != res.Stats.Typed {
		t.Fatalf("format %q, %d objects, %d typed by path", res.Format, res.Stats.Objects, res.Stats.Typed)
	}
	r := doctor.Run(context.Background(), res.Snapshot, checks.All(), res.Now)
	want := []struct{ check, object, words string }{
		{"workload-pods", "qakots/StatefulSet/kotsadm-minio", "unable to pull the image"},
		{"workload-pods", "qakots/Pod/kotsadm-migrations-1616434755", "init container plan"},
		{"workload-pods", "default/DaemonSet/troubleshoot54lbp", "/var/lib/collectd/rrd is not a directory"},
		{"workload-pods", "default/DaemonSet/troubleshootvgknq", "/var/lib/collectd/rrd is not a directory"},
		{"unschedulable", "test/DaemonSet/svclb-example-nginx", "host port 80/TCP is held by pod kube-system/svclb-traefik-4zcw8"},
	}
	got := map[string]string{}
	for _, f := range r.Findings {
		if f.Check == "rollout-history" && f.Severity == doctor.Info {
			continue
		}
		got[f.Check+" "+f.Object.Namespace+"/"+f.Object.Kind+"/"+f.Object.Name] = f.Message
	}
	for _, w := range want {
		msg, ok := got[w.check+" "+w.object]
		if !ok || !strings.Contains(msg, w.words) {
			t.Errorf("%s on %s: %q, want it to say %q", w.check, w.object, msg, w.words)
		}
		delete(got, w.check+" "+w.object)
	}
	for k, msg := range got {
		t.Errorf("unexpected finding %s: %s", k, msg)
	}
}

// TestRealK3sSupportBundle reads an excerpt of a bundle troubleshoot.sh
// 0.121.3 wrote in September 2025 on a one-node k3s cluster where a
// developer broke workloads on purpose: the crash loop is the one critical
// finding; the k3s packaged components' revisionHistoryLimit 0 is k3s's
// (an info note naming the Addon, not a warning); the per-namespace errors
// file of PodDisruptionBudgets (the collector asked for a removed API)
// makes the PDB checks say what the capture could not list.
func TestRealK3sSupportBundle(t *testing.T) {
	res := mustLoad(t, filepath.Join("..", "..", "testdata", "offline", "troubleshoot-2025-support-bundle.tar.gz"), offline.Options{})
	if res.Format != offline.FormatBundle || res.Snapshot.ServerVersion == "" {
		t.Fatalf("format %q, version %q", res.Format, res.Snapshot.ServerVersion)
	}
	r := doctor.Run(context.Background(), res.Snapshot, checks.All(), res.Now)
	want := map[string]string{
		"critical workload-pods default/Deployment/backend-api":              "is crash-looping",
		"info rollout-history kube-system/Deployment/coredns":                "set by k3s addon coredns",
		"info rollout-history kube-system/Deployment/local-path-provisioner": "set by k3s addon local-storage",
		"info rollout-history kube-system/Deployment/metrics-server":         "set by k3s addon metrics-server-deployment",
	}
	expectFindings(t, r, want)
	for _, c := range r.Checks {
		if c.Name == "pdb-blocks-drain" && !strings.Contains(c.Reason, "could not list poddisruptionbudgets.policy: the server could not find the requested resource") {
			t.Errorf("pdb-blocks-drain: %s %q", c.Status, c.Reason)
		}
	}
}

// TestRealSonobuoyResults: a whole Sonobuoy results archive of a kind
// cluster (v1.21.1, August 2021; testdata/offline/README.md) is read as one
// capture: its hosts/, meta/ and plugins/ files are no objects and are
// passed over, the resources it queried and wrote nothing of (Sonobuoy
// writes no file for an empty list) are read and empty, its Endpoints
// become slices, and the real leftovers of the conformance run it captured
// are reported.
func TestRealSonobuoyResults(t *testing.T) {
	res := mustLoad(t, filepath.Join("..", "..", "testdata", "offline", "sonobuoy-results-2021.tar.gz"), offline.Options{})
	if res.Format != offline.FormatSonobuoy || res.Snapshot.ServerVersion != "v1.21.1" || res.Stats.Mirrored == 0 {
		t.Fatalf("format %q, version %q, %d Endpoints mirrored", res.Format, res.Snapshot.ServerVersion, res.Stats.Mirrored)
	}
	r := doctor.Run(context.Background(), res.Snapshot, checks.All(), res.Now)
	if !r.Complete {
		t.Errorf("incomplete: %+v", r.Incomplete)
	}
	want := map[string]string{
		// The e2e test's pod that no node may take, 74 minutes pending.
		"warning unschedulable resourcequota-9871/Pod/terminating-pod": "no node has the label x-test.k8s.io/unsatisfiable",
		// Its Endpoints list no address: no pod matches the selector.
		"warning service-endpoints services-4744/Service/nodeport-service": "but no pod in namespace services-4744 matches",
		"warning service-target-port services-4744/Service/externalsvc":    "targets container port 9376",
	}
	expectFindings(t, r, want)
	for _, c := range r.Checks {
		if c.Name == "unschedulable" || c.Name == "service-endpoints" || c.Name == "pvc-pending" {
			if c.Status != doctor.StatusPassed && c.Status != doctor.StatusFailed {
				t.Errorf("%s: %s %s", c.Name, c.Status, c.Reason)
			}
		}
	}
}

// expectFindings requires exactly the findings of want, keyed "severity
// check namespace/Kind/name", each message containing its words.
func expectFindings(t *testing.T, r *doctor.Report, want map[string]string) {
	t.Helper()
	for _, f := range r.Findings {
		k := f.Severity.String() + " " + f.Check + " " + f.Object.Namespace + "/" + f.Object.Kind + "/" + f.Object.Name
		words, ok := want[k]
		if !ok || !strings.Contains(f.Message, words) {
			t.Errorf("finding %s: %s", k, f.Message)
		}
		delete(want, k)
	}
	for k := range want {
		t.Errorf("missing %s", k)
	}
}
