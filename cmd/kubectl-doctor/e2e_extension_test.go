package main_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/localcluster"
)

// testCRD is a CustomResourceDefinition that keeps every field and has a
// status subresource, as the add-ons' own CRDs serve their kinds.
func testCRD(group, version, kind, plural, scope string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[4]s.%[1]s}
spec:
  group: %[1]s
  scope: %[5]s
  names: {kind: %[3]s, listKind: %[3]sList, plural: %[4]s, singular: %[6]s}
  versions:
  - {name: %[2]s, served: true, storage: true, subresources: {status: {}}, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`, group, version, kind, plural, scope, strings.ToLower(kind))
}

// sameFromDump dumps the scenario cluster and checks that one check's
// findings read from the dump are the live scan's (live).
func sameFromDump(t *testing.T, check string, live doctor.Report) {
	t.Helper()
	dump := filepath.Join(t.TempDir(), "snapshot.yaml")
	if d := runDoctor(t, scenarios.Kubeconfig, "dump", "-o", dump); d.code != 0 {
		t.Fatalf("dump: exit %d: %s", d.code, d.stderr)
	}
	off := decodeReport(t, runDoctor(t, "/nonexistent", "--from", dump, "--check", check, "-o", "json", "--fail-on", "never").stdout)
	if got, want := strings.Join(findingKeys(off), "\n"), strings.Join(findingKeys(live), "\n"); got != want || want == "" {
		t.Errorf("from the dump:\n%s\nlive:\n%s", got, want)
	}
}

// serveExtension installs the CRDs of an API group the scenario cluster does
// not serve (OpenShift's config, cert-manager), waits until the loader can
// map every kind in kinds (kind -> plural), then loads objects (with their
// status); on cleanup it deletes the CRDs and waits until the group is gone,
// so that the other tests scan a cluster without it.
func serveExtension(t *testing.T, cfg *rest.Config, groupVersion string, kinds map[string]string, crds, objects string) {
	t.Helper()
	ctx := context.Background()
	gv, err := schema.ParseGroupVersion(groupVersion)
	if err != nil {
		t.Fatal(err)
	}
	apply := func(body string) {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "01-objects.yaml"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		if err := localcluster.LoadScenarios(ctx, cfg, []string{dir}, &log); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := func(want bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			rl, err := dc.ServerResourcesForGroupVersion(groupVersion)
			if !want {
				return apierrors.IsNotFound(err), nil
			}
			if err != nil || len(rl.APIResources) < len(kinds) {
				return false, nil
			}
			// The loader maps kinds from the aggregated discovery, which
			// catches up with a new CRD later than its group version does.
			groups, err := restmapper.GetAPIGroupResources(dc)
			if err != nil {
				return false, nil
			}
			mapper := restmapper.NewDiscoveryRESTMapper(groups)
			for kind := range kinds {
				if _, err := mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: kind}, gv.Version); err != nil {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			t.Fatalf("waiting for %s served=%v: %v", groupVersion, want, err)
		}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		crdClient := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
		for _, plural := range kinds {
			name := plural + "." + gv.Group
			if err := crdClient.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %s: %v", name, err)
			}
		}
		served(false)
	})
	apply(crds)
	served(true)
	if strings.TrimSpace(objects) == "" {
		return
	}
	apply(objects)
	// Scans read from the watch cache, which may lag a moment behind the
	// status just written (a second write after the create): wait until
	// it serves every object with its status.
	want := map[string]int{} // kind -> objects written with a status
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(objects), 4096)
	for {
		var o map[string]any
		if err := dec.Decode(&o); err != nil {
			break
		}
		if _, ok := o["status"]; ok {
			want[o["kind"].(string)]++
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		for kind, n := range want {
			l, err := dyn.Resource(gv.WithResource(kinds[kind])).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return false, nil
			}
			got := 0
			for _, it := range l.Items {
				if _, ok := it.Object["status"]; ok {
					got++
				}
			}
			if got < n {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("waiting for the watch cache to serve the objects' status: %v", err)
	}
}
