package checks_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestCertificatesWithoutIssuers: a user who may read Certificates but not
// Issuers (or a capture of Certificates alone) still gets every failing
// certificate, each on its own (nothing folded into an issuer it could not
// read), and no "its Issuer X does not exist" claim.
func TestCertificatesWithoutIssuers(t *testing.T) {
	set, err := fixture.Load(filepath.Join("..", "testdata", "checks", "certificates"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := set.SnapshotWith([]snapshot.Resource{snapshot.Certificates})
	if err != nil {
		t.Fatal(err)
	}
	r := doctor.Run(context.Background(), snap, []*doctor.Check{checks.Certificates}, fixture.Now())
	got := map[string]doctor.Finding{}
	for _, f := range r.Findings {
		got[f.Object.Kind+"/"+f.Object.Namespace+"/"+f.Object.Name] = f
		if strings.Contains(f.Message, "Issuer selfsigned does not exist") || strings.Contains(f.Message, "; its ") {
			t.Errorf("%s: claims an issuer is missing without having read issuers: %s", f.Object, f.Message)
		}
		if f.Object.Kind != "Certificate" {
			t.Errorf("finding on %s without issuers read", f.Object)
		}
	}
	// The two certificates internal-ca held back are reported alone.
	if f, ok := got["Certificate/payments/internal-mtls"]; !ok || f.Severity != doctor.Warning || !strings.Contains(f.Message, "has never been issued") {
		t.Errorf("payments/internal-mtls: %+v", f)
	}
	if f, ok := got["Certificate/payments/worker-mtls"]; !ok || f.Severity != doctor.Critical || !strings.Contains(f.Message, "issuer internal-ca is not ready") {
		t.Errorf("payments/worker-mtls: %+v", f)
	}
	for _, quiet := range []string{"fresh-tls", "good-tls", "renewing-tls", "gone-tls", "blog-internal"} {
		for k := range got {
			if strings.HasSuffix(k, "/"+quiet) {
				t.Errorf("look-alike %s reported: %s", quiet, got[k].Message)
			}
		}
	}
}
