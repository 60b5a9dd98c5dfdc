package checks

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// ExternalSecretsSync reports External Secrets Operator ExternalSecrets that
// fail to sync their Secret, in the provider's words, whether the Secret
// still holds the values of an earlier sync or was never written, and the
// stores that cannot reach their provider as the one cause of every
// ExternalSecret they hold back.
var ExternalSecretsSync = &doctor.Check{
	Name:     "external-secrets",
	Severity: doctor.Warning,
	Origin:   "everyday",
	Reads:    []snapshot.Resource{snapshot.ExternalSecrets},
	Optional: []snapshot.Resource{snapshot.SecretStores, snapshot.ClusterSecretStores},
	Run:      runExternalSecrets,
	Doc: `External Secrets Operator ExternalSecrets that fail to sync, and the secret stores behind them

## Why it matters
An ExternalSecret copies values from a provider (AWS Secrets Manager, Vault,
GCP Secret Manager, Azure Key Vault...) into a Kubernetes Secret. When the
sync fails, a Secret that was never written keeps every pod that uses it in
` + "`CreateContainerConfigError`" + ` (the kubelet says only "secret not found"), and a
Secret written earlier silently keeps stale values: a rotated database
password is never picked up. One store whose credentials expired or whose
IAM role lost a permission stops every ExternalSecret that uses it.

## How it is detected
From one LIST of ` + "`externalsecrets.external-secrets.io`" + ` v1 (served since ESO 0.16.2; an
older ESO serves only v1beta1 and is not read live, while captures of
v1beta1 objects are;
and, when readable, of ` + "`secretstores`" + ` and ` + "`clustersecretstores`" + `; a cluster without
ESO answers 404 and the check passes with nothing to judge, its reason says so). An ExternalSecret with ` + "`Ready=False`" + ` for
10 minutes is reported with ESO's reason and message (the provider's error),
and whether its target Secret was ever written (` + "`status.refreshTime`" + `: the
values are those of the last sync, so many hours old) or never was. An
ExternalSecret whose store (SecretStore or ClusterSecretStore) is not ready
is folded into the store's finding, which lists them; a store that does not
exist is named. Workloads whose pods wait for a Secret an ExternalSecret
writes are told to look at it, not to create the Secret by hand, and their
finding folds into this one. ExternalSecrets being deleted, or failing for less than 10 minutes (by
their condition's time, else by their age), are not judged.

## How to fix
Read ESO's account (` + "`kubectl describe externalsecret NAME -n NS`" + `, the store's
conditions, the operator's log), fix the provider side (the key's name, the
role's permission, the store's credentials), then force a refresh instead of
waiting for ` + "`refreshInterval`" + `: ` + "`kubectl annotate externalsecret NAME -n NS force-sync=$(date +%s) --overwrite`" + `.

## References
- https://external-secrets.io/latest/api/externalsecret/
- https://external-secrets.io/latest/guides/troubleshooting/
- https://external-secrets.io/latest/api/secretstore/`,
}

// notReadyHeld is the Ready=False condition once it has held for
// gitopsGrace (or for an unknown time), else nil.
func notReadyHeld(p *doctor.Pass, conds []snapshot.PlatformCondition) *snapshot.PlatformCondition {
	c := platformCondition(conds, "Ready")
	if c == nil || c.Status != "False" || !held(p.Now, c.LastTransitionTime.Time, gitopsGrace) {
		return nil
	}
	return c
}

func externalSecretRef(ns, name string) doctor.ObjectRef {
	return doctor.ObjectRef{APIVersion: "external-secrets.io/v1", Kind: "ExternalSecret", Namespace: ns, Name: name}
}

func runExternalSecrets(p *doctor.Pass) error {
	type store struct {
		ref      doctor.ObjectRef
		down     *snapshot.PlatformCondition
		describe string
		held     []string // "ns/name" of the ExternalSecrets it holds back
		members  []doctor.ObjectRef
	}
	stores := map[string]*store{} // "SecretStore/ns/name", "ClusterSecretStore//name"
	for i := range p.Snapshot.SecretStores() {
		s := &p.Snapshot.SecretStores()[i]
		stores["SecretStore/"+s.Namespace+"/"+s.Name] = &store{down: notReadyHeld(p, s.Status.Conditions),
			ref:      doctor.ObjectRef{APIVersion: "external-secrets.io/v1", Kind: "SecretStore", Namespace: s.Namespace, Name: s.Name},
			describe: fmt.Sprintf("kubectl describe secretstore %s -n %s", s.Name, s.Namespace)}
	}
	for i := range p.Snapshot.ClusterSecretStores() {
		s := &p.Snapshot.ClusterSecretStores()[i]
		stores["ClusterSecretStore//"+s.Name] = &store{down: notReadyHeld(p, s.Status.Conditions),
			ref:      doctor.ObjectRef{APIVersion: "external-secrets.io/v1", Kind: "ClusterSecretStore", Name: s.Name},
			describe: "kubectl describe clustersecretstore " + s.Name}
	}
	ess := slices.Clone(p.Snapshot.ExternalSecrets()) // sorted here, not in the shared snapshot
	sort.Slice(ess, func(i, j int) bool {
		if ess[i].Namespace != ess[j].Namespace {
			return ess[i].Namespace < ess[j].Namespace
		}
		return ess[i].Name < ess[j].Name
	})
	for i := range ess {
		es := &ess[i]
		if es.DeletionTimestamp != nil {
			continue
		}
		// The condition's time says how long it failed; without one, the
		// object's age bounds it.
		c := notReadyHeld(p, es.Status.Conditions)
		if c == nil || c.LastTransitionTime.IsZero() && !held(p.Now, es.CreationTimestamp.Time, gitopsGrace) {
			continue
		}
		kind := es.Spec.SecretStoreRef.Kind
		if kind == "" {
			kind = "SecretStore"
		}
		key := kind + "/" + es.Namespace + "/" + es.Spec.SecretStoreRef.Name
		if kind == "ClusterSecretStore" {
			key = kind + "//" + es.Spec.SecretStoreRef.Name
		}
		if s := stores[key]; s != nil && s.down != nil {
			s.held = append(s.held, es.Namespace+"/"+es.Name)
			s.members = append(s.members, externalSecretRef(es.Namespace, es.Name))
			continue
		}
		msg := fmt.Sprintf("externalsecret %s (secret %s) fails to sync%s%s", es.Name, es.TargetName(), heldFor(p.Now, c), quoteReason(c.Reason, c.Message))
		if es.Spec.SecretStoreRef.Name != "" && stores[key] == nil && addOnListed(p, kind == "ClusterSecretStore", snapshot.ClusterSecretStores, snapshot.SecretStores, es.Namespace) {
			msg += fmt.Sprintf("; its %s %s does not exist", kind, es.Spec.SecretStoreRef.Name)
		}
		if !es.Status.RefreshTime.IsZero() {
			msg += fmt.Sprintf("; the Secret holds the values of its last sync, %s ago", human(p.Now.Sub(es.Status.RefreshTime.Time)))
		} else {
			msg += "; the Secret has never been written, so pods that use it do not start"
		}
		p.Report(doctor.Finding{Object: externalSecretRef(es.Namespace, es.Name), Message: msg, Remediation: []doctor.Remediation{
			{Text: "read ESO's account of it (the provider's error, the key it asked for)", Command: fmt.Sprintf("kubectl describe externalsecret %s -n %s", es.Name, es.Namespace)},
			{Text: "after the fix, sync it now instead of at its next refresh", Command: fmt.Sprintf("kubectl annotate externalsecret %s -n %s force-sync=$(date +%%s) --overwrite", es.Name, es.Namespace)}}})
	}
	keys := make([]string, 0, len(stores))
	for k := range stores {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := stores[k]
		if s.down == nil {
			continue
		}
		msg := fmt.Sprintf("%s %s cannot reach its provider%s%s", strings.ToLower(s.ref.Kind), s.ref.Name, heldFor(p.Now, s.down), quoteReason(s.down.Reason, s.down.Message))
		f := doctor.Finding{Object: s.ref, Remediation: []doctor.Remediation{{Text: "read the store's conditions and events (its credentials, role or endpoint)", Command: s.describe}}}
		if n := len(s.held); n > 0 {
			msg += fmt.Sprintf(": %s %s no longer synced (%s)", doctor.Plural(n, "externalsecret", "externalsecrets"), map[bool]string{true: "is", false: "are"}[n == 1], examplesEllipsis(s.held))
			f.Count, f.Examples, f.Members = n, doctor.Examples(s.held), s.members
		} else {
			if s.ref.Kind == "ClusterSecretStore" && p.Snapshot.Namespace != "" {
				continue // ExternalSecrets of namespaces out of scope may use it
			}
			f.Severity = doctor.Info
			msg += ": no failing externalsecret uses it"
		}
		f.Message = msg
		p.Report(f)
	}
	return nil
}

// addOnListed says whether an absent object of an add-on kind (an issuer,
// a secret store) would have been read: its list, cluster-wide or of the
// namespaced kind, succeeded and covers the namespace.
func addOnListed(p *doctor.Pass, cluster bool, clusterKind, nsKind snapshot.Resource, ns string) bool {
	if cluster {
		return p.Snapshot.Err(clusterKind) == nil
	}
	return p.Snapshot.Err(nsKind) == nil && p.Snapshot.Covers(ns)
}

// secretWriter is the controller object that writes Secret ns/name, when
// the snapshot holds one: a cert-manager Certificate (spec.secretName) or an
// ExternalSecret (its target). A Secret such an object writes is never to
// be created by hand: the controller does not adopt it, or overwrites it.
func secretWriter(p *doctor.Pass, ns, name string) (doctor.ObjectRef, doctor.Remediation, bool) {
	for i := range p.Snapshot.ExternalSecrets() {
		es := &p.Snapshot.ExternalSecrets()[i]
		if es.Namespace == ns && es.TargetName() == name && es.DeletionTimestamp == nil {
			return externalSecretRef(ns, es.Name), doctor.Remediation{
				Text:    fmt.Sprintf("do not create it by hand: externalsecret %s writes it from its secret store; see why it has not", es.Name),
				Command: fmt.Sprintf("kubectl describe externalsecret %s -n %s", es.Name, ns)}, true
		}
	}
	for i := range p.Snapshot.Certificates() {
		c := &p.Snapshot.Certificates()[i]
		if c.Namespace == ns && c.Spec.SecretName == name && c.DeletionTimestamp == nil {
			return certRef(ns, c.Name), doctor.Remediation{
				Text:    fmt.Sprintf("do not create it by hand: cert-manager issues it for certificate %s; see why it is not ready", c.Name),
				Command: fmt.Sprintf("kubectl describe certificate %s -n %s", c.Name, ns)}, true
		}
	}
	return doctor.ObjectRef{}, doctor.Remediation{}, false
}
