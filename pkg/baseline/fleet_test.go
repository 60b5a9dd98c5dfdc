package baseline

import (
	"bytes"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
)

// TestFleetBaselineIsScopedPerCluster: a fleet report is a baseline whose
// findings count only in their own cluster; the same problem on the same
// object in another cluster is new there.
func TestFleetBaselineIsScopedPerCluster(t *testing.T) {
	web := f("a", "shop", "web", "60 pods rejected", 60, doctor.Critical)
	fleet := doctor.Merge([]doctor.ClusterResult{{Name: "prod", Report: scan(web)}, {Name: "dr", Report: scan()}}, 0)
	var out bytes.Buffer
	if err := report.PrintFleet(&out, fleet, report.Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	b, err := Parse(out.Bytes(), "fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	prod, dr := scan(f("a", "shop", "web", "61 pods rejected", 61, doctor.Critical)), scan(f("a", "shop", "web", "1 pod", 1, doctor.Critical))
	b.ForCluster("prod").Apply(prod)
	b.ForCluster("dr").Apply(dr)
	if prod.Findings[0].Baseline != doctor.BaselineKnown || dr.Findings[0].Baseline != doctor.BaselineNew {
		t.Errorf("prod %s, dr %s; want known, new", prod.Findings[0].Baseline, dr.Findings[0].Baseline)
	}
	// A single-cluster report as a baseline applies to every cluster.
	single, err := Parse([]byte(`{"apiVersion":"`+doctor.APIVersion+`","kind":"Report","findings":[{"check":"a","object":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop","name":"web"}}]}`), "one.json")
	if err != nil {
		t.Fatal(err)
	}
	dr2 := scan(f("a", "shop", "web", "1 pod", 1, doctor.Critical))
	single.ForCluster("dr").Apply(dr2)
	if dr2.Findings[0].Baseline != doctor.BaselineKnown {
		t.Errorf("unscoped baseline finding not applied to dr: %s", dr2.Findings[0].Baseline)
	}
}
