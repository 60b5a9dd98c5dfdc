package checks_test

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestScopedScanInventsNothing: a scan of one namespace (-n NS) lists the
// namespaced resources of NS only, so objects of other namespaces are
// absent from its snapshot without being absent from the cluster. On every
// fixture set and every namespace in it, the scoped scan may lose findings
// (their evidence was not listed) but must not make any: each finding it
// reports, by check and object, is one the cluster-wide scan reports or
// folds, or one that says what the scope kept it from judging (Partial: the
// cluster-wide scan leaves a pod waiting for a full node to the node's
// finding, which needs every namespace's pods); and none is on a namespaced
// object of another namespace.
func TestScopedScanInventsNothing(t *testing.T) {
	all := checks.WithProfiles()
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "checks", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixture directories: %v", err)
	}
	keys := func(r *doctor.Report) map[string]string {
		out := map[string]string{}
		for _, f := range r.Findings {
			out[f.Check+" "+f.Object.String()] = f.Message
			// A grouped finding stands for each of its members: a scoped
			// scan may name another of them first.
			for _, m := range f.Members {
				if _, ok := out[f.Check+" "+m.String()]; !ok {
					out[f.Check+" "+m.String()] = f.Message
				}
			}
			for _, e := range f.Explains {
				if k, _, ok := strings.Cut(e, ": "); ok {
					out[k] = e
				}
			}
		}
		return out
	}
	scans, extra := 0, 0
	for _, dir := range dirs {
		set, err := fixture.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		run := func(objs []runtime.Object, ns string) *doctor.Report {
			snap, err := snapshot.FromObjects(objs...)
			if err != nil {
				t.Fatal(err)
			}
			if set.Metrics != "" {
				if err := snap.SetMetrics(strings.NewReader(set.Metrics)); err != nil {
					t.Fatal(err)
				}
			}
			snap.Namespace, snap.ServerVersion = ns, FixtureServerVersion
			return doctor.Run(context.Background(), snap, all, fixture.Now())
		}
		full := keys(run(set.Objects, ""))
		namespaces := map[string]bool{}
		for _, o := range set.Objects {
			if m, ok := o.(metav1.Object); ok && m.GetNamespace() != "" {
				namespaces[m.GetNamespace()] = true
			}
		}
		var names []string
		for ns := range namespaces {
			names = append(names, ns)
		}
		sort.Strings(names)
		for _, ns := range names {
			var objs []runtime.Object
			for _, o := range set.Objects {
				if m, ok := o.(metav1.Object); !ok || m.GetNamespace() == "" || m.GetNamespace() == ns {
					objs = append(objs, o)
				}
			}
			scans++
			for _, f := range run(objs, ns).Findings {
				k := f.Check + " " + f.Object.String()
				if f.Object.Namespace != "" && f.Object.Namespace != ns {
					t.Errorf("%s -n %s: finding on another namespace: %s: %s", filepath.Base(dir), ns, k, f.Message)
				}
				if _, ok := full[k]; !ok && f.Partial == "" {
					t.Errorf("%s -n %s: finding the cluster-wide scan does not make: %s: %s", filepath.Base(dir), ns, k, f.Message)
				}
				if _, ok := full[k]; !ok {
					extra++
				}
				// What a scoped scan typically gets wrong: calling
				// missing or unused what lives in a namespace it did not
				// list.
				if (strings.Contains(f.Message, "does not exist") && !strings.Contains(full[k], "does not exist") ||
					strings.Contains(f.Message, "uses it yet") && !strings.Contains(full[k], "uses it yet") ||
					strings.Contains(f.Message, "names it") && !strings.Contains(full[k], "names it") ||
					strings.Contains(f.Message, "uses it:") && !strings.Contains(full[k], "uses it:")) && full[k] != "" {
					t.Errorf("%s -n %s: %s says something does not exist: %s\ncluster-wide: %s", filepath.Base(dir), ns, k, f.Message, full[k])
				}
			}
		}
	}
	if extra == 0 {
		t.Error("no scoped scan made a finding of its own: the Partial case above is not exercised")
	}
	if scans < 50 {
		t.Errorf("only %d scoped scans: the fixtures hold fewer namespaces than expected", scans)
	}
}
