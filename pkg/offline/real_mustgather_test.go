package offline_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/offline"
)

// TestRealCaptures reads captures other tools wrote on real clusters
// (testdata/offline/README.md: two OpenShift must-gathers, an Insights
// archive's ClusterOperators, two troubleshoot.sh support bundles) and
// checks three things against the files themselves, counted here without
// the loader: every distinct object of a kind checks read is filed exactly
// once (a must-gather holds pods twice: its core/pods.yaml list and a
// pods/NAME/NAME.yaml copy each); every check whose required reads the
// capture holds runs (and one skipped says "not in the dump"); and the
// findings are exactly the ones judged true in docs/offline.md.
func TestRealCaptures(t *testing.T) {
	for _, tc := range []struct {
		path string
		// findings: "severity check object: message regexp", sorted.
		findings []string
	}{
		// Its one undocumented workload is at its first revision: no
		// change-cause note (nothing to roll back to).
		{"must-gather-kubevirt", nil},
		{"must-gather-ocp48", nil},
		{"insights-archive", []string{
			// Real: the router pod could not be scheduled (a host port
			// taken, masters tainted), as the operator says.
			`info cluster-operators ClusterOperator/authentication: ^cluster operator authentication blocks minor upgrades \(UnsupportedConfigOverrides_UnsupportedConfigOverridesSet\)`,
			`info cluster-operators ClusterOperator/etcd: ^cluster operator etcd blocks minor upgrades \(UnsupportedConfigOverrides_UnsupportedConfigOverridesSet\)`,
			`warning cluster-operators ClusterOperator/ingress: ^cluster operator ingress is degraded for 8h \(IngressControllersDegraded\): "Some ingresscontrollers are degraded: .*Pod \\"router-default-7bbdcfcf9b-7xdln\\" cannot be scheduled: 0/2 nodes are available: 1 node\(s\) didn't have free ports`,
		}},
		// minio's workloads are at their first revision: no change-cause note.
		{"sbctl-support-bundle", nil},
		{"troubleshoot-support-bundle.tar.gz", []string{
			`info rollout-history Namespace/default: no kubernetes.io/change-cause annotation`,
			// kube-system's workloads are k3s addons: their history is the addon's.
		}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			p := filepath.Join("..", "..", "testdata", "offline", tc.path)
			want, dupes := countObjects(t, p)
			res := mustLoad(t, p, offline.Options{})
			// Endpoints of a capture without slices are filed as the
			// slices mirrored from them (endpoints.go).
			for _, es := range res.Snapshot.EndpointSlices() {
				if strings.Contains(es.Name, "-mirrored-") {
					want["EndpointSlice"]++
				}
			}
			total := 0
			got := map[string]int{}
			for _, r := range res.Snapshot.Listed() {
				n := len(res.Snapshot.Objects(r))
				if n > 0 {
					got[r.Kind] += n
				}
				total += n
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("objects filed by kind:\n got %v\nwant %v (distinct in the files)", got, want)
			}
			if total != res.Stats.Objects {
				t.Errorf("the snapshot holds %d objects, the stats say %d", total, res.Stats.Objects)
			}
			if res.Stats.Duplicates != dupes {
				t.Errorf("%d duplicates counted, the files hold %d second copies", res.Stats.Duplicates, dupes)
			}

			r := doctor.Run(context.Background(), res.Snapshot, checks.All(), res.Now)
			byName := map[string]*doctor.Check{}
			for _, c := range checks.All() {
				byName[c.Name] = c
			}
			ran := 0
			for _, c := range r.Checks {
				hasData := true
				for _, read := range byName[c.Name].Reads {
					if res.Snapshot.Err(read) != nil {
						hasData = false
					}
				}
				switch {
				case c.Status == doctor.StatusPassed || c.Status == doctor.StatusFailed:
					ran++
				case c.Status == doctor.StatusSkipped && !hasData:
					if !strings.HasPrefix(c.Reason, offline.Absent+": ") {
						t.Errorf("%s skipped for another reason: %s", c.Name, c.Reason)
					}
				default:
					t.Errorf("%s holds its data but is %s: %s", c.Name, c.Status, c.Reason)
				}
			}
			if ran == 0 {
				t.Fatal("no check ran")
			}
			var lines []string
			for _, f := range r.Findings {
				lines = append(lines, fmt.Sprintf("%s %s %s/%s: %s", f.Severity, f.Check, f.Object.Kind, f.Object.Name, f.Message))
			}
			sort.Strings(lines)
			if len(lines) != len(tc.findings) {
				t.Fatalf("%d findings, want %d:\n%s", len(lines), len(tc.findings), strings.Join(lines, "\n"))
			}
			for i, w := range tc.findings {
				head, re, _ := strings.Cut(w, ": ")
				gotHead, msg, _ := strings.Cut(lines[i], ": ")
				if gotHead != head || !regexp.MustCompile(re).MatchString(msg) {
					t.Errorf("finding %d:\n got %s\nwant %s", i, lines[i], w)
				}
			}
			t.Logf("%d objects (%v), %d duplicates, %d checks ran, %d findings", total, got, dupes, ran, len(lines))
		})
	}
}

// readKinds are the kinds kubectl-doctor's checks read, by API group as
// captures write them (removed versions included: the loader converts
// them): counted here independently of the loader's own tables.
var readKinds = map[string][]string{
	"":                             {"Node", "Namespace", "Pod", "Service", "Event", "PersistentVolumeClaim", "PersistentVolume", "ServiceAccount"},
	"apps":                         {"ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "ControllerRevision"},
	"extensions":                   {"ReplicaSet", "Deployment", "DaemonSet", "Ingress"},
	"batch":                        {"Job", "CronJob"},
	"discovery.k8s.io":             {"EndpointSlice"},
	"apiregistration.k8s.io":       {"APIService"},
	"admissionregistration.k8s.io": {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"},
	"flowcontrol.apiserver.k8s.io": {"PriorityLevelConfiguration"},
	"storage.k8s.io":               {"StorageClass"},
	"autoscaling":                  {"HorizontalPodAutoscaler"},
	"policy":                       {"PodDisruptionBudget"},
	"networking.k8s.io":            {"Ingress", "IngressClass", "NetworkPolicy"},
	"events.k8s.io":                {"Event"},
	"rbac.authorization.k8s.io":    {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"},
	"gateway.networking.k8s.io":    {"GatewayClass", "Gateway", "HTTPRoute", "GRPCRoute"},
	"config.openshift.io":          {"ClusterOperator", "ClusterVersion"},
}

// countObjects counts the distinct objects (by UID) of the kinds checks
// read in the YAML and JSON files of a directory or a .tar.gz, and the
// copies beyond the first. Files that do not parse (redacted custom
// resources) and documents that are not objects are passed over.
func countObjects(t *testing.T, p string) (map[string]int, int) {
	t.Helper()
	seen := map[string]string{} // uid -> kind
	dupes := 0
	add := func(obj map[string]any, listAPIVersion, listKind string) {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		if kind == "" {
			apiVersion, kind = listAPIVersion, listKind
		}
		group, _, found := strings.Cut(apiVersion, "/")
		if !found {
			group = ""
		}
		if !slices.Contains(readKinds[group], kind) {
			return
		}
		md, _ := obj["metadata"].(map[string]any)
		uid, _ := md["uid"].(string)
		if uid == "" {
			uid = fmt.Sprintf("%s/%v/%v", kind, md["namespace"], md["name"])
		}
		if _, ok := seen[uid]; ok {
			dupes++
			return
		}
		seen[uid] = kind
	}
	file := func(name string, data []byte) {
		ext := strings.ToLower(filepath.Ext(name))
		if ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return
		}
		yr := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := yr.Read()
			if err != nil {
				return // io.EOF, or a document that does not parse
			}
			var v any
			if yaml.Unmarshal(doc, &v) != nil {
				return
			}
			var values []any
			if arr, ok := v.([]any); ok {
				values = arr
			} else {
				values = []any{v}
			}
			for _, val := range values {
				obj, ok := val.(map[string]any)
				if !ok {
					continue
				}
				kind, _ := obj["kind"].(string)
				if items, ok := obj["items"].([]any); ok && strings.HasSuffix(kind, "List") {
					apiVersion, _ := obj["apiVersion"].(string)
					for _, it := range items {
						if m, ok := it.(map[string]any); ok {
							add(m, apiVersion, strings.TrimSuffix(kind, "List"))
						}
					}
					continue
				}
				add(obj, "", "")
			}
		}
	}
	if strings.HasSuffix(p, ".tar.gz") {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg && !strings.Contains(h.Name, "/logs/") {
				b, err := io.ReadAll(tr)
				if err != nil {
					t.Fatal(err)
				}
				file(h.Name, b)
			}
		}
	} else {
		err := filepath.WalkDir(p, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || strings.Contains(filepath.ToSlash(path), "/logs/") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			file(path, b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]int{}
	for _, kind := range seen {
		// A kind the loader files under a newer version is still itself.
		out[kind]++
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no object of a kind checks read", p)
	}
	return out, dupes
}

// TestRuntimeSocketFromMustGather: a must-gather holds pods (twice: the
// core list and per-pod files) and nodes; a collector DaemonSet's pods
// mounting the Docker socket on CRI-O nodes are judged from the pods'
// specs when the DaemonSet is not in the capture.
func TestRuntimeSocketFromMustGather(t *testing.T) {
	node := func(name string) string {
		return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\nstatus:\n  nodeInfo: {containerRuntimeVersion: cri-o://1.27.4-5.rhaos4.14.git1a2b3c4.el9, kubeletVersion: v1.27.8+4fab27b}\n"
	}
	pod := func(name, nodeName string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","namespace":"openshift-logging","uid":"uid-` + name + `",` +
			`"ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"collector","uid":"ds-uid","controller":true}]},` +
			`"spec":{"nodeName":"` + nodeName + `","containers":[{"name":"collector","image":"vector","volumeMounts":[{"name":"docker","mountPath":"/var/run/docker.sock"}]}],` +
			`"volumes":[{"name":"docker","hostPath":{"path":"/var/run/docker.sock","type":""}}]},"status":{"phase":"Running"}}`
	}
	dir := writeTree(t, map[string]string{
		"mg/cluster-scoped-resources/core/nodes/worker-a.yaml":                 node("worker-a"),
		"mg/cluster-scoped-resources/core/nodes/worker-b.yaml":                 node("worker-b"),
		"mg/namespaces/openshift-logging/core/pods.yaml":                       `{"apiVersion":"v1","kind":"PodList","items":[` + pod("collector-a1", "worker-a") + "," + pod("collector-b2", "worker-b") + `]}`,
		"mg/namespaces/openshift-logging/pods/collector-a1/collector-a1.yaml":  pod("collector-a1", "worker-a"),
		"mg/namespaces/openshift-logging/pods/collector-b2/collector-b2.yaml":  pod("collector-b2", "worker-b"),
		"mg/namespaces/openshift-logging/apps/daemonsets.yaml":                 "apiVersion: v1\nkind: List\nitems: []\nmetadata: {resourceVersion: \"\"}\n",
		"mg/namespaces/openshift-logging/openshift-logging.yaml":               "apiVersion: v1\nkind: Namespace\nmetadata: {name: openshift-logging}\n",
		"mg/cluster-scoped-resources/config.openshift.io/clusterversions.yaml": "apiVersion: config.openshift.io/v1\nkind: ClusterVersionList\nitems: []\n",
	})
	res := mustLoad(t, filepath.Join(dir, "mg"), offline.Options{})
	if res.Stats.Duplicates != 2 || len(res.Snapshot.Pods()) != 2 {
		t.Errorf("%d duplicates, %d pods", res.Stats.Duplicates, len(res.Snapshot.Pods()))
	}
	r := doctor.Run(context.Background(), res.Snapshot, []*doctor.Check{checks.RuntimeSocket}, res.Now)
	var warnings []string
	for _, f := range r.Findings {
		if f.Severity == doctor.Warning {
			warnings = append(warnings, f.Object.String()+": "+f.Message)
		}
	}
	want := regexp.MustCompile(`^openshift-logging/daemonset/collector: daemonset/collector mounts the Docker Engine socket /var/run/docker\.sock, but the 2 nodes its pods run on run cri-o://1\.27\.4-5\.rhaos4\.14\.git1a2b3c4\.el9 ×2: .* \(judged from its pods: the DaemonSet is not in the input\)$`)
	if len(warnings) != 1 || !want.MatchString(warnings[0]) {
		t.Errorf("warnings: %q", warnings)
	}
}
