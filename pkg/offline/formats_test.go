package offline_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/offline"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// writeTree writes files (slash paths) under a temp dir and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const nodeList = `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[
 {"metadata":{"name":"n1","creationTimestamp":"2024-01-01T00:00:00Z"},
  "spec":{"taints":[{"key":"node.kubernetes.io/unreachable","effect":"NoSchedule","timeAdded":"2024-03-01T10:00:00Z"}]},
  "status":{"conditions":[{"type":"Ready","status":"Unknown","lastHeartbeatTime":"2024-03-01T09:59:00Z","lastTransitionTime":"2024-03-01T10:00:00Z","reason":"NodeStatusUnknown"}]}}]}`

func podList(ns string, names ...string) string {
	var items []string
	for _, n := range names {
		items = append(items, `{"metadata":{"name":"`+n+`","namespace":"`+ns+`","creationTimestamp":"2024-03-01T11:00:00Z"},"spec":{"containers":[{"name":"c","image":"i","env":[{"name":"A","value":"b"}]}]},"status":{"phase":"Running"}}`)
	}
	return `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[` + strings.Join(items, ",") + `]}`
}

func mustLoad(t *testing.T, p string, opts offline.Options) *offline.Result {
	t.Helper()
	res, err := offline.Load(p, opts)
	if err != nil {
		t.Fatalf("loading %s: %v", p, err)
	}
	return res
}

// TestClusterInfoDumpTree: `kubectl cluster-info dump --output-directory`
// writes nodes.json and NS/{events,pods,...}.json lists (items without
// apiVersion/kind) and NS/POD/logs.txt; only what it wrote is present.
func TestClusterInfoDumpTree(t *testing.T) {
	root := writeTree(t, map[string]string{
		"nodes.json":                              nodeList,
		"kube-system/pods.json":                   podList("kube-system", "a", "b"),
		"kube-system/a/logs.txt":                  "not json at all {",
		"kube-system/replicasets.json":            `{"kind":"ReplicaSetList","apiVersion":"apps/v1","metadata":{},"items":[]}`,
		"kube-system/events.json":                 `{"kind":"EventList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"e","namespace":"kube-system"},"involvedObject":{"kind":"Pod","name":"a","namespace":"kube-system"},"reason":"FailedCreatePodSandBox","type":"Warning","lastTimestamp":"2024-03-01T12:00:00Z"}]}`,
		"kube-system/services.json":               `{"kind":"ServiceList","apiVersion":"v1","metadata":{},"items":[]}`,
		"kube-system/daemonsets.json":             `{"kind":"DaemonSetList","apiVersion":"apps/v1","metadata":{},"items":[]}`,
		"kube-system/deployments.json":            `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{},"items":[]}`,
		"kube-system/replicationcontrollers.json": `{"kind":"ReplicationControllerList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"rc","namespace":"kube-system"}}]}`,
	})
	res := mustLoad(t, root, offline.Options{})
	s := res.Snapshot
	if res.Format != offline.FormatObjects {
		t.Errorf("format %q", res.Format)
	}
	if got := len(s.Pods()); got != 2 {
		t.Errorf("%d pods, want 2", got)
	}
	if env := s.Pods()[0].Spec.Containers[0].Env; env != nil {
		t.Errorf("pods are not trimmed as a live scan trims them: env %v", env)
	}
	if got := s.Events("reason=FailedCreatePodSandBox"); len(got) != 1 {
		t.Errorf("events filtered by selector: %d, want 1", len(got))
	}
	for _, r := range []snapshot.Resource{snapshot.ReplicaSets, snapshot.Services, snapshot.Nodes, snapshot.DaemonSets} {
		if err := s.Err(r); err != nil {
			t.Errorf("%s: %v (an empty list in the dump is present)", r, err)
		}
	}
	for _, r := range []snapshot.Resource{snapshot.Namespaces, snapshot.Jobs, snapshot.APIServerMetrics} {
		err := s.Err(r)
		if err == nil || !snapshot.IsSkippable(err) || err.Error() != "not in the dump: "+r.String() {
			t.Errorf("%s: err %v, want skippable \"not in the dump: %s\"", r, err, r)
		}
	}
	if res.Stats.Ignored["ReplicationController"] != 1 {
		t.Errorf("ignored kinds %v", res.Stats.Ignored)
	}
	// The newest timestamp is the clock: the event's lastTimestamp.
	if want := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC); !res.Now.Equal(want) {
		t.Errorf("now = %s, want %s", res.Now, want)
	}
	// Checks run, and those whose reads are missing are skipped, not passed.
	r := doctor.Run(context.Background(), s, checks.All(), res.Now)
	status := map[string]doctor.CheckResult{}
	for _, c := range r.Checks {
		status[c.Name] = c
	}
	if c := status["node-taints"]; c.Status != doctor.StatusFailed {
		t.Errorf("node-taints on an unreachable node: %+v", c)
	}
	if c := status["namespace-stuck-terminating"]; c.Status != doctor.StatusSkipped || !strings.Contains(c.Reason, "not in the dump: namespaces") {
		t.Errorf("namespace-stuck-terminating without namespaces: %+v", c)
	}
	for _, c := range r.Checks {
		if c.Status == doctor.StatusPassed {
			for _, read := range checkReads(c.Name) {
				if s.Err(read) != nil {
					t.Errorf("%s passed although %s is not in the dump", c.Name, read)
				}
			}
		}
	}
}

func checkReads(name string) []snapshot.Resource {
	for _, c := range checks.All() {
		if c.Name == name {
			return c.Reads
		}
	}
	return nil
}

// TestClusterInfoDumpStream: the same dump on stdout, pod logs included
// between its JSON lists, read from "-".
func TestClusterInfoDumpStream(t *testing.T) {
	stream := nodeList + "\n" + podList("default", "web-1") + "\n" +
		"==== START logs for container c of pod default/web-1 ====\n{ not json\n]]]\n==== END logs for container c of pod default/web-1 ====\n" +
		podList("kube-system", "dns") + "\n"
	res, err := offline.Load("-", offline.Options{Stdin: strings.NewReader(stream)})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Snapshot.Pods()); got != 2 {
		t.Errorf("%d pods, want 2", got)
	}
	if len(res.Snapshot.Nodes()) != 1 {
		t.Errorf("nodes %v", res.Snapshot.Nodes())
	}
}

// TestKubectlGetOutput: a kubectl List (items carry their kinds), multi-
// document YAML, and a directory of one object per file, recursively.
func TestKubectlGetOutput(t *testing.T) {
	list := `{"apiVersion":"v1","kind":"List","metadata":{},"items":[
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"shop"}},
 {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"shop"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}}}}},
 {"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"shop"},"data":{"k":"c2VjcmV0"}},
 {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"shop"}}]}`
	yamlDocs := "# kubectl get pods,nodes -o yaml, one per document\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p2, namespace: shop}\n---\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
	root := writeTree(t, map[string]string{
		"list.json":          list,
		"more/docs.yaml":     yamlDocs,
		"more/deep/one.yml":  "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
		"more/deep/notes.md": "# ignored: not JSON or YAML",
	})
	res := mustLoad(t, root, offline.Options{})
	s := res.Snapshot
	if len(s.Pods()) != 2 || len(s.Deployments()) != 1 || len(s.Nodes()) != 1 || len(s.Namespaces()) != 1 {
		t.Errorf("pods %d deployments %d nodes %d namespaces %d", len(s.Pods()), len(s.Deployments()), len(s.Nodes()), len(s.Namespaces()))
	}
	if res.Stats.Secrets != 1 || res.Stats.Ignored["ConfigMap"] != 1 || res.Stats.Objects != 5 {
		t.Errorf("stats %+v", res.Stats)
	}
	// A kubectl List marks only its items' kinds present.
	if err := s.Err(snapshot.ReplicaSets); err == nil {
		t.Error("replicasets present although no input held any")
	}
	// -n keeps one namespace.
	res = mustLoad(t, root, offline.Options{Namespace: "other"})
	if len(res.Snapshot.Pods()) != 0 || res.Stats.OutOfScope != 3 || len(res.Snapshot.Nodes()) != 1 {
		t.Errorf("-n other: pods %d, out of scope %d, nodes %d", len(res.Snapshot.Pods()), res.Stats.OutOfScope, len(res.Snapshot.Nodes()))
	}
	// One file, YAML.
	res = mustLoad(t, filepath.Join(root, "more", "docs.yaml"), offline.Options{})
	if len(res.Snapshot.Pods()) != 1 {
		t.Errorf("single YAML file: %d pods", len(res.Snapshot.Pods()))
	}
}

// bundleFiles is a troubleshoot.sh support bundle in miniature: lists per
// namespace, cluster-scoped lists, an errors file, discovery documents and
// redacted custom resources that are not objects.
func bundleFiles() map[string]string {
	return map[string]string{
		"bundle/version.yaml":                                    "apiVersion: troubleshoot.sh/v1beta2\nkind: SupportBundle\nspec: {versionNumber: 0.62.1}\n",
		"bundle/analysis.json":                                   `[{"name":"x","isPass":true}]`,
		"bundle/cluster-info/cluster_version.json":               `{"info":{"gitVersion":"v1.23.5"},"string":"v1.23.5"}`,
		"bundle/cluster-resources/nodes.json":                    nodeList,
		"bundle/cluster-resources/groups.json":                   `[{"name":"","versions":[{"groupVersion":"v1","version":"v1"}]}]`,
		"bundle/cluster-resources/pods/default.json":             podList("default", "web-1"),
		"bundle/cluster-resources/pods/logs/default/web-1/c.log": "log line",
		"bundle/cluster-resources/cronjobs/default.json":         `{"kind":"CronJobList","apiVersion":"batch/v1beta1","metadata":{},"items":[{"kind":"CronJob","apiVersion":"batch/v1beta1","metadata":{"name":"nightly","namespace":"default"},"spec":{"schedule":"0 3 * * *","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}}}}]}`,
		"bundle/cluster-resources/deployments-errors.json":       `["deployments.apps is forbidden: User \"x\" cannot list resource \"deployments\" in API group \"apps\" in the namespace \"kube-system\""]`,
		"bundle/cluster-resources/deployments/default.json":      `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{},"items":[]}`,
		// Newer collectors write a map from namespace to error.
		"bundle/cluster-resources/pod-disruption-budgets-errors.json": `{"default":"the server could not find the requested resource","kube-system":"the server could not find the requested resource"}`,
		"bundle/cluster-resources/custom-resources/x.io/a.yaml":       "- apiVersion: x.io/v1\n  kind: X\n  spec: *redacted\n",
		"bundle/cluster-resources/image-pull-secrets/default/r.json":  `{"***HIDDEN***":"kurl"}`,
		"bundle/cluster-resources/auth-cani-list/default.json":        `[{"verbs":["*"]}]`,
	}
}

func TestSupportBundle(t *testing.T) {
	check := func(t *testing.T, res *offline.Result) {
		t.Helper()
		s := res.Snapshot
		if res.Format != offline.FormatBundle || s.ServerVersion != "v1.23.5" {
			t.Errorf("format %q, version %q", res.Format, s.ServerVersion)
		}
		if len(s.Pods()) != 1 || len(s.Nodes()) != 1 {
			t.Errorf("pods %d nodes %d", len(s.Pods()), len(s.Nodes()))
		}
		if cj := s.CronJobs(); len(cj) != 1 || cj[0].Spec.Schedule != "0 3 * * *" || res.Stats.Converted["batch/v1beta1 CronJob"] != 1 {
			t.Errorf("batch/v1beta1 CronJob not converted: %+v, %v", cj, res.Stats.Converted)
		}
		err := s.Err(snapshot.Deployments)
		if err == nil || !snapshot.IsSkippable(err) || !strings.Contains(err.Error(), "incomplete in the dump") || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("deployments with an errors file: %v", err)
		}
		if err := s.Err(snapshot.PodDisruptionBudgets); err == nil || !strings.Contains(err.Error(), "could not find the requested resource (namespace default), and 1 more namespace") {
			t.Errorf("poddisruptionbudgets with a per-namespace errors file: %v", err)
		}
		if res.Stats.NotObjects == 0 {
			t.Errorf("non-object documents not counted: %+v", res.Stats)
		}
	}
	root := writeTree(t, bundleFiles())
	t.Run("directory", func(t *testing.T) { check(t, mustLoad(t, root, offline.Options{})) })
	t.Run("tar.gz", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "support-bundle.tar.gz")
		writeTarGz(t, p, bundleFiles())
		check(t, mustLoad(t, p, offline.Options{}))
	})
	t.Run("tar.gz on stdin", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "b.tgz")
		writeTarGz(t, p, bundleFiles())
		f, _ := os.Open(p)
		defer f.Close()
		check(t, mustLoad(t, "-", offline.Options{Stdin: f}))
	})
	// A resource file that is broken is an error even in a bundle.
	files := bundleFiles()
	files["bundle/cluster-resources/pods/default.json"] = podList("default", "web-1")[:100]
	_, err := offline.Load(writeTree(t, files), offline.Options{})
	if err == nil || !strings.Contains(err.Error(), "cluster-resources/pods/default.json: document 1: not valid JSON: unexpected end of input (truncated?)") {
		t.Errorf("truncated pods file in a bundle: %v", err)
	}
}

func writeTarGz(t *testing.T, p string, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte(body))
	}
	_ = tw.Close()
	_ = zw.Close()
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestBrokenInput: one error naming the file and what is wrong.
func TestBrokenInput(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		path  string
		want  string
	}{
		"truncated yaml": {map[string]string{"a.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"unterminated\n"}, "a.yaml",
			"a.yaml: document 1: not valid YAML"},
		"truncated json": {map[string]string{"a.json": podList("d", "x")[:60]}, "a.json",
			"a.json: document 1: not valid JSON: unexpected end of input (truncated?)"},
		"json that is not objects": {map[string]string{"dir/data.json": `{"name":"x","values":[1,2]}`}, "dir",
			"dir/data.json: document 1: an object: not a Kubernetes object (no apiVersion and kind)"},
		"array of numbers": {map[string]string{"n.json": `[1,2,3]`}, "n.json", "n.json: document 1: an array element: not a Kubernetes object"},
		"list cut before its kind": {map[string]string{"l.yaml": "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a, namespace: b}\n"}, "l.yaml",
			"l.yaml: document 1: a list with apiVersion and items but no kind: kubectl writes \"kind: List\" after the items, so the file was likely cut short (truncated?)"},
		"wrong field type": {map[string]string{"p.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: 3}\n"}, "p.yaml",
			"p.yaml: document 1: decoding v1 Pod: "},
		"second doc broken": {map[string]string{"m.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\nkind: [\n"}, "m.yaml",
			"m.yaml: document 2: not valid YAML"},
		"empty directory": {map[string]string{"d/readme.txt": "hi"}, "d", "holds no Kubernetes objects"},
		"only secrets":    {map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"}, "s.yaml", "holds no Kubernetes objects"},
		"missing file":    {map[string]string{}, "nope.yaml", "nope.yaml: no such file or directory"},
		"list without kind": {map[string]string{"l.json": `{"apiVersion":"v1","kind":"List","items":[{"metadata":{"name":"x"}}]}`}, "l.json",
			"l.json: document 1: List: an item has no kind"},
	} {
		t.Run(name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			_, err := offline.Load(filepath.Join(root, tc.path), offline.Options{})
			var ie *offline.InputError
			if !errors.As(err, &ie) || !strings.Contains(filepath.ToSlash(err.Error()), tc.want) {
				t.Fatalf("err = %v, want an input error with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
		})
	}
}

// endpointsCapture is a Sonobuoy-like capture: Services, their core/v1
// Endpoints (one ready and one not-ready address for web, none for the
// typo'd api), pods, empty workload lists, and no EndpointSlice.
const endpointsCapture = `{"kind":"List","apiVersion":"v1","items":[
 {"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop","creationTimestamp":"2024-03-01T09:00:00Z"},"spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":8080}]}},
 {"apiVersion":"v1","kind":"Service","metadata":{"name":"api","namespace":"shop","creationTimestamp":"2024-03-01T09:00:00Z"},"spec":{"selector":{"app":"apii"},"ports":[{"port":80}]}},
 {"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"web","namespace":"shop"},"subsets":[{"addresses":[{"ip":"10.1.0.5","nodeName":"n1","targetRef":{"kind":"Pod","namespace":"shop","name":"web-1"}}],"notReadyAddresses":[{"ip":"10.1.0.6","targetRef":{"kind":"Pod","namespace":"shop","name":"web-2"}}],"ports":[{"name":"http","port":8080,"protocol":"TCP"}]}]},
 {"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"api","namespace":"shop"}},
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"shop","labels":{"app":"web"},"creationTimestamp":"2024-03-01T10:00:00Z"},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":8080,"name":"http"}]}]},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}},
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"api-1","namespace":"shop","labels":{"app":"api"},"creationTimestamp":"2024-03-01T10:00:00Z"},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}]}
{"kind":"DeploymentList","apiVersion":"apps/v1","items":[]}
{"kind":"StatefulSetList","apiVersion":"apps/v1","items":[]}`

// Core/v1 Endpoints in a capture without EndpointSlices become the slices
// the mirroring controller would write, so the Service checks run on it;
// a capture that holds slices keeps them alone.
func TestEndpointsMirrored(t *testing.T) {
	res := mustLoad(t, writeTree(t, map[string]string{"capture.json": endpointsCapture}), offline.Options{})
	if res.Stats.Mirrored != 2 {
		t.Errorf("mirrored %d Endpoints, want 2", res.Stats.Mirrored)
	}
	slices := res.Snapshot.EndpointSlices()
	if len(slices) != 1 || slices[0].Labels["kubernetes.io/service-name"] != "web" || len(slices[0].Endpoints) != 2 ||
		!*slices[0].Endpoints[0].Conditions.Ready || *slices[0].Endpoints[1].Conditions.Ready || *slices[0].Ports[0].Port != 8080 {
		t.Fatalf("slices %+v", slices)
	}
	r := doctor.Run(context.Background(), res.Snapshot, []*doctor.Check{checks.ServiceEndpoints}, res.Now)
	if r.Checks[0].Status != doctor.StatusFailed || len(r.Findings) != 1 || r.Findings[0].Object.Name != "api" {
		t.Errorf("service-endpoints on the mirrored capture: %+v %+v", r.Checks, r.Findings)
	}

	withSlices := endpointsCapture + `
{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"web-abc","namespace":"shop","labels":{"kubernetes.io/service-name":"web"}},"addressType":"IPv4","endpoints":[{"addresses":["10.1.0.5"],"conditions":{"ready":true}}]}`
	res = mustLoad(t, writeTree(t, map[string]string{"capture.json": withSlices}), offline.Options{})
	if res.Stats.Mirrored != 0 || len(res.Snapshot.EndpointSlices()) != 1 || res.Stats.Ignored["Endpoints"] != 2 {
		t.Errorf("with slices: mirrored %d, slices %d, ignored %v", res.Stats.Mirrored, len(res.Snapshot.EndpointSlices()), res.Stats.Ignored)
	}
}

// A must-gather's timestamp file dates the capture (its last line, the
// end), so ages are as of the capture and not of the newest timestamp in
// it; the tree is called a must-gather, not a support bundle.
func TestMustGatherTimestamp(t *testing.T) {
	root := writeTree(t, map[string]string{
		"must-gather.local.1/quay-io-image/cluster-scoped-resources/core/nodes.yaml": nodeList,
		"must-gather.local.1/timestamp":                                              "2024-11-11 10:26:15.108213 +0530 IST m=+3.422694084\n2024-11-11 10:27:32.700267 +0530 IST m=+81.015029667\n",
	})
	res := mustLoad(t, root, offline.Options{})
	want := time.Date(2024, 11, 11, 4, 57, 32, 700267000, time.UTC)
	if res.Format != offline.FormatMustGather || !res.CapturedAt.Equal(want) || !res.Now.Equal(want) {
		t.Errorf("format %q, captured %s, now %s; want must-gather captured %s", res.Format, res.CapturedAt, res.Now, want)
	}
	// A file named timestamp that says something else dates nothing.
	root = writeTree(t, map[string]string{
		"bundle/cluster-resources/nodes.json": nodeList,
		"bundle/timestamp":                    "not a time\n",
	})
	res = mustLoad(t, root, offline.Options{})
	if res.Format != offline.FormatBundle || !res.CapturedAt.IsZero() {
		t.Errorf("format %q, captured %s; want a support bundle with no capture time", res.Format, res.CapturedAt)
	}
}

// A cluster-info dump written by kubectl 1.13 or older holds internal types
// ("Items", capitalised fields): refused with that said, not as "no
// apiVersion and kind" about an empty list.
func TestOldKubectlDumpRefused(t *testing.T) {
	root := writeTree(t, map[string]string{
		"default/daemonsets.json": `{"selfLink":"/apis/extensions/v1beta1/namespaces/default/daemonsets","resourceVersion":"1","Items":[]}`,
	})
	_, err := offline.Load(root, offline.Options{})
	var ie *offline.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "kubectl 1.13 and older") {
		t.Errorf("old dump: %v", err)
	}
}

// The layout of Sonobuoy before v0.13: bare arrays named after their kind
// (resources/ns/NS/Pods.json, resources/cluster/Nodes.json), typed by the
// name; non-object files beside them passed over; a queried kind without a
// file (an empty list) read and empty, one whose query failed not.
func TestSonobuoyLayout(t *testing.T) {
	root := writeTree(t, map[string]string{
		"hosts/node-1/configz.json":    `{"kubeletconfig":{"maxPods":110}}`,
		"meta/query-time.json":         `[{"queryobj":"pods","namespace":"shop","time":"3ms"},{"queryobj":"deployments","namespace":"shop","time":"2ms"},{"queryobj":"persistentvolumeclaims","namespace":"shop","time":"2ms","error":"forbidden"},{"queryobj":"Nodes","time":"1ms"}]`,
		"resources/cluster/Nodes.json": `[{"metadata":{"name":"n1","creationTimestamp":"2017-12-13T17:00:00Z"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}]`,
		"resources/ns/shop/Pods.json":  `[{"metadata":{"name":"web-1","namespace":"shop","creationTimestamp":"2017-12-13T17:05:00Z"},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}}]`,
		"serverversion.json":           `{"major":"1","minor":"8","gitVersion":"v1.8.4"}`,
	})
	res := mustLoad(t, root, offline.Options{})
	s := res.Snapshot
	if res.Format != offline.FormatSonobuoy || s.ServerVersion != "v1.8.4" || len(s.Pods()) != 1 || len(s.Nodes()) != 1 || res.Stats.Typed != 2 {
		t.Fatalf("format %q, version %q, %d pods, %d nodes, %d typed", res.Format, s.ServerVersion, len(s.Pods()), len(s.Nodes()), res.Stats.Typed)
	}
	if s.Err(snapshot.Deployments) != nil || len(s.Deployments()) != 0 {
		t.Errorf("deployments, queried and empty: %v", s.Err(snapshot.Deployments))
	}
	if s.Err(snapshot.PersistentVolumeClaims) == nil || s.Err(snapshot.StatefulSets) == nil {
		t.Errorf("claims (query failed) and statefulsets (not queried) must not read as empty: %v, %v", s.Err(snapshot.PersistentVolumeClaims), s.Err(snapshot.StatefulSets))
	}
}

// A capture collected per namespace holds no object of a namespace it did
// not visit: a webhook whose backend lives there is not called missing
// (its Service is unknown, not absent), while one whose namespace the
// capture holds and whose Service it lacks still is.
func TestUncapturedNamespaceIsNotMissing(t *testing.T) {
	hook := func(name, ns string) string {
		return `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"` + name + `","annotations":{"cert-manager.io/inject-ca-from":"x/y"}},` +
			`"webhooks":[{"name":"` + name + `.example.com","failurePolicy":"Fail","sideEffects":"None","admissionReviewVersions":["v1"],` +
			`"clientConfig":{"service":{"namespace":"` + ns + `","name":"webhook-service","port":443}},` +
			`"rules":[{"operations":["CREATE"],"apiGroups":["*"],"apiVersions":["*"],"resources":["clusters"]}]}]}`
	}
	capture := hook("cattle", "cattle-system") + "\n" + hook("shop", "shop") + "\n" +
		`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfigurationList","items":[]}` + "\n" +
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"ports":[{"port":80}]}}` + "\n" +
		`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"web-1","namespace":"shop","labels":{"kubernetes.io/service-name":"web"}},"addressType":"IPv4","endpoints":[]}`
	res := mustLoad(t, writeTree(t, map[string]string{"capture.json": capture}), offline.Options{})
	if res.Snapshot.Covers("cattle-system") || !res.Snapshot.Covers("shop") {
		t.Errorf("covers cattle-system %v, shop %v", res.Snapshot.Covers("cattle-system"), res.Snapshot.Covers("shop"))
	}
	r := doctor.Run(context.Background(), res.Snapshot, []*doctor.Check{checks.AdmissionWebhooks}, res.Now)
	if len(r.Findings) != 1 || r.Findings[0].Object.Name != "shop" || !strings.Contains(r.Findings[0].Message, "service shop/webhook-service does not exist") {
		t.Errorf("findings %+v", r.Findings)
	}
}

// The capture's clock is its newest past timestamp: a terminating pod's
// deletionTimestamp (the request plus its grace period, in the future) counts
// as the request; condition times of HPAs count. A namespaced object pasted
// without its namespace is in "default", as kubectl would apply it.
func TestClockAndDefaultNamespace(t *testing.T) {
	capture := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"drainer","namespace":"b5","creationTimestamp":"2026-06-01T10:00:00Z","deletionTimestamp":"2026-06-01T12:10:00Z","deletionGracePeriodSeconds":3600},"spec":{"containers":[{"name":"a","image":"a"}]}}
{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web","creationTimestamp":"2026-05-01T10:00:00Z"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":3},"status":{"conditions":[{"type":"AbleToScale","status":"False","reason":"FailedGetScale","lastTransitionTime":"2026-06-01T11:00:00Z"}]}}`
	res := mustLoad(t, writeTree(t, map[string]string{"capture.json": capture}), offline.Options{})
	if want := time.Date(2026, 6, 1, 11, 10, 0, 0, time.UTC); !res.Now.Equal(want) {
		t.Errorf("clock %s, want %s (the deletion request, not its deadline)", res.Now, want)
	}
	if hpas := res.Snapshot.HorizontalPodAutoscalers(); len(hpas) != 1 || hpas[0].Namespace != "default" {
		t.Errorf("HPA without namespace: %+v", hpas)
	}
	res = mustLoad(t, writeTree(t, map[string]string{"capture.json": strings.SplitN(capture, "\n", 2)[1]}), offline.Options{})
	if want := time.Date(2026, 6, 1, 11, 0, 0, 0, time.UTC); !res.Now.Equal(want) {
		t.Errorf("clock %s, want the HPA condition's time %s", res.Now, want)
	}
}

// Windows PowerShell 5.1's ">" writes UTF-16LE with a byte order mark:
// such a file is read like its UTF-8 text.
func TestUTF16Input(t *testing.T) {
	text := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"shop"},"spec":{"containers":[{"name":"a","image":"a"}]}}`
	b := []byte{0xFF, 0xFE}
	for _, r := range text {
		b = append(b, byte(r), 0)
	}
	res := mustLoad(t, writeTree(t, map[string]string{"pods.json": string(b)}), offline.Options{})
	if pods := res.Snapshot.Pods(); len(pods) != 1 || pods[0].Name != "web" {
		t.Errorf("pods %v", pods)
	}
}

// An autoscaling/v1 HPA keeps its conditions as JSON in an annotation:
// they become the v2 conditions hpa-scaling judges.
func TestHPAv1Conditions(t *testing.T) {
	capture := `apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: sample
  namespace: argocd
  creationTimestamp: "2020-11-23T19:00:00Z"
  annotations:
    autoscaling.alpha.kubernetes.io/conditions: '[{"type":"ScalingActive","status":"False","lastTransitionTime":"2020-11-23T19:38:38Z","reason":"FailedGetResourceMetric","message":"unable to fetch metrics from resource metrics API"}]'
spec:
  maxReplicas: 3
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: sample}
  targetCPUUtilizationPercentage: 50
`
	res := mustLoad(t, writeTree(t, map[string]string{"hpa.yaml": capture}), offline.Options{})
	hpas := res.Snapshot.HorizontalPodAutoscalers()
	if len(hpas) != 1 || len(hpas[0].Status.Conditions) != 1 || hpas[0].Status.Conditions[0].Reason != "FailedGetResourceMetric" {
		t.Fatalf("conditions not carried over: %+v", hpas)
	}
	if _, ok := hpas[0].Annotations["autoscaling.alpha.kubernetes.io/conditions"]; ok {
		t.Error("the annotation is kept beside the conditions")
	}
}

// Rancher's support-bundle-kit writes empty values as the string "null":
// its bundles (yamls/cluster, yamls/namespaced) read as if they were null,
// so a "null" creationTimestamp parses and a slice port named "null" is the
// Service's unnamed port.
func TestRancherSupportBundleNulls(t *testing.T) {
	pods := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: virt-api-1, namespace: harvester-system, creationTimestamp: "2022-03-22T20:00:00Z", labels: {app: virt-api}}
  spec:
    containers: [{name: api, image: virt-api:1}]
    nodeName: "null"
  status: {phase: Running, startTime: "null"}
`
	slices := `apiVersion: v1
kind: List
items:
- apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  metadata: {name: virt-api-x, namespace: harvester-system, creationTimestamp: "null", labels: {kubernetes.io/service-name: virt-api}}
  addressType: IPv4
  endpoints: [{addresses: [10.52.0.66], conditions: {ready: true}}]
  ports: [{name: "null", port: 8443, protocol: TCP}]
`
	res := mustLoad(t, writeTree(t, map[string]string{
		"sb/metadata.yaml": "bundleversion: 0.0.1\nbundlecreatedat: 2022-03-22T23:49:32Z\n",
		"sb/yamls/namespaced/harvester-system/v1/pods.yaml":                            pods,
		"sb/yamls/namespaced/harvester-system/discovery.k8s.io/v1/endpointslices.yaml": slices,
	}), offline.Options{})
	ps, sl := res.Snapshot.Pods(), res.Snapshot.EndpointSlices()
	if len(ps) != 1 || ps[0].Spec.NodeName != "" || ps[0].Status.StartTime != nil {
		t.Errorf("pods %+v", ps)
	}
	if len(sl) != 1 || len(sl[0].Ports) != 1 {
		t.Fatalf("slices %+v", sl)
	}
	if n := sl[0].Ports[0].Name; n != nil && *n != "" {
		t.Errorf("port name %q, want unnamed", *n)
	}
}
