package offline_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/offline"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

const brokenYAML = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: x\n"

// TestUnreadableFiles: a capture file that does not parse is an error
// naming it, in a must-gather too (its namespaces/ tree lies outside the
// cluster-scoped-resources marker, where files used to be dropped
// silently); with KeepGoing it is listed, the resource its path names is
// failed (not judged from the rest of its objects), and the rest is read.
func TestUnreadableFiles(t *testing.T) {
	mustGather := func(broken string) map[string]string {
		files := map[string]string{
			"mg/cluster-scoped-resources/core/nodes/n1.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
			"mg/namespaces/shop/core/pods.yaml":              podList("shop", "web-1"),
			"mg/namespaces/shop/apps/deployments.yaml":       "apiVersion: v1\nkind: List\nitems: []\n",
		}
		files["mg/"+broken] = brokenYAML
		return files
	}
	for name, c := range map[string]struct {
		files map[string]string
		// resource the broken file is filed under; "" when its path names none
		resource snapshot.Resource
		file     string
	}{
		"must-gather core list":   {mustGather("namespaces/shop/core/events.yaml"), snapshot.Events(""), "mg/namespaces/shop/core/events.yaml"},
		"must-gather per-pod":     {mustGather("namespaces/shop/pods/web-1/web-1.yaml"), snapshot.Pods, "mg/namespaces/shop/pods/web-1/web-1.yaml"},
		"must-gather node":        {mustGather("cluster-scoped-resources/core/nodes/n2.yaml"), snapshot.Nodes, "mg/cluster-scoped-resources/core/nodes/n2.yaml"},
		"must-gather operator":    {mustGather("cluster-scoped-resources/config.openshift.io/clusteroperators/dns.yaml"), snapshot.ClusterOperators, "clusteroperators/dns.yaml"},
		"must-gather namespace":   {mustGather("namespaces/shop/shop.yaml"), snapshot.Namespaces, "mg/namespaces/shop/shop.yaml"},
		"cluster-info dump file":  {map[string]string{"d/nodes.json": `{"kind":"NodeList","apiVersion":"v1","items":[]}`, "d/shop/pods.json": "{\"kind\":\"PodList\",\"items\":[{\"metadata\""}, snapshot.Pods, "d/shop/pods.json"},
		"kubectl output, unnamed": {map[string]string{"k/a.yaml": podList("shop", "web-1"), "k/b.yaml": brokenYAML}, snapshot.Resource{}, "k/b.yaml"},
		"bundle pods":             {map[string]string{"b/cluster-resources/nodes.json": `{"kind":"NodeList","apiVersion":"v1","items":[]}`, "b/cluster-resources/pods/shop.json": "{\"kind\":\"PodList\",\"items\":["}, snapshot.Pods, "b/cluster-resources/pods/shop.json"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeTree(t, c.files)
			_, err := offline.Load(dir, offline.Options{})
			var ie *offline.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.file) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("without KeepGoing: %v, want one line naming %s", err, c.file)
			}
			res, err := offline.Load(dir, offline.Options{KeepGoing: true})
			if err != nil {
				t.Fatalf("with KeepGoing: %v", err)
			}
			if len(res.Stats.Unreadable) != 1 {
				t.Fatalf("unreadable: %+v", res.Stats.Unreadable)
			}
			u := res.Stats.Unreadable[0]
			if !strings.HasSuffix(u.File, c.file) || !strings.Contains(u.Error, "not valid") || u.Resource != c.resource.String() && c.resource.Kind != "" {
				t.Errorf("unreadable %+v, want %s (%s)", u, c.file, c.resource)
			}
			if c.resource.Kind == "" {
				if u.Resource != "" {
					t.Errorf("a path naming no resource filed under %q", u.Resource)
				}
				if len(res.Snapshot.Pods()) != 1 {
					t.Errorf("the readable file's pod was not kept")
				}
				return
			}
			// Failed, not absent and not judged from the other files.
			check := c.resource
			if check.Kind == "Event" {
				check = snapshot.Events("type=Warning") // as checks read them
			}
			err = res.Snapshot.Err(check)
			if err == nil || snapshot.CauseOf(err) != snapshot.CauseFailed || !strings.Contains(err.Error(), "unreadable in the input") {
				t.Errorf("%s: %v (cause %s), want failed: unreadable", check, err, snapshot.CauseOf(err))
			}
			if c.resource != snapshot.Nodes && res.Snapshot.Err(snapshot.Nodes) != nil {
				t.Errorf("nodes not read: %v", res.Snapshot.Err(snapshot.Nodes))
			}
		})
	}
}

// TestKeepGoingLimits: KeepGoing passes over files that do not parse,
// never a size limit, a damaged archive or a lone broken file.
func TestKeepGoingLimits(t *testing.T) {
	// In a bundle's directory of a kind no check reads, where a file that
	// does not parse is passed over even without KeepGoing.
	dir := writeTree(t, map[string]string{"b/cluster-resources/nodes.json": `{"kind":"NodeList","apiVersion":"v1","items":[]}`,
		"b/cluster-resources/custom-resources/x.json": podList("d", manyNames(3000)...)})
	if _, err := offline.Load(dir, offline.Options{KeepGoing: true, MaxDocument: 1 << 10}); err == nil || !strings.Contains(err.Error(), "--max-document-size") {
		t.Errorf("size limit with KeepGoing: %v", err)
	}
	lone := filepath.Join(t.TempDir(), "pods.yaml")
	if err := os.WriteFile(lone, []byte(brokenYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := offline.Load(lone, offline.Options{KeepGoing: true}); err == nil || !strings.Contains(err.Error(), "pods.yaml: document 1: not valid YAML") {
		t.Errorf("a lone broken file with KeepGoing: %v", err)
	}
	cut := tarOf(t, map[string]string{"b/cluster-resources/pods/d.json": podList("d", "a")}, false)
	if _, err := offline.Load("-", offline.Options{KeepGoing: true, Stdin: strings.NewReader(string(cut))}); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("a truncated archive with KeepGoing: %v", err)
	}
	// In an archive (a .tar.gz must-gather on stdin), each member is a file.
	arch := gz(t, tarOf(t, map[string]string{"mg/namespaces/shop/core/pods.yaml": podList("shop", "web-1"),
		"mg/namespaces/shop/pods/web-1/web-1.yaml": brokenYAML}, true))
	res, err := offline.Load("-", offline.Options{KeepGoing: true, Stdin: strings.NewReader(string(arch))})
	if err != nil || len(res.Stats.Unreadable) != 1 || res.Stats.Unreadable[0].File != "-:mg/namespaces/shop/pods/web-1/web-1.yaml" || res.Stats.Unreadable[0].Resource != "pods" {
		t.Errorf("an archive with KeepGoing: %v %+v", err, res)
	}
	// Everything unreadable: nothing to scan.
	only := writeTree(t, map[string]string{"k/a.yaml": brokenYAML})
	if _, err := offline.Load(only, offline.Options{KeepGoing: true}); err == nil || !strings.Contains(err.Error(), "holds no Kubernetes objects") {
		t.Errorf("only unreadable files: %v", err)
	}
}
