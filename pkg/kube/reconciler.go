package kube

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reconciled is what re-applies an object from a source of its own, so that
// a kubectl patch of it does not last: k3s's deploy controller (an Addon
// applied from the server's manifests) or the addon manager in Reconcile
// mode. Who is empty when nothing known does.
type Reconciled struct {
	Who     string // "k3s addon coredns", "the addon manager"
	Inspect string // a command that shows the source, "" when there is none
}

// ReconcilerOf says what re-applies the object, if anything known does.
func ReconcilerOf(m metav1.Object) Reconciled {
	a, l := m.GetAnnotations(), m.GetLabels()
	if gvk := a["objectset.rio.cattle.io/owner-gvk"]; strings.HasPrefix(gvk, "k3s.cattle.io/") && strings.HasSuffix(gvk, "Kind=Addon") {
		name, ns := a["objectset.rio.cattle.io/owner-name"], a["objectset.rio.cattle.io/owner-namespace"]
		if name != "" && ns != "" {
			return Reconciled{Who: "k3s addon " + name, Inspect: "kubectl get addon " + name + " -n " + ns + " -o yaml"}
		}
		return Reconciled{Who: "a k3s addon"}
	}
	if l["addonmanager.kubernetes.io/mode"] == "Reconcile" {
		return Reconciled{Who: "the addon manager"}
	}
	return Reconciled{}
}

// ManagedBy names what applies the object from a history of its own (a
// Helm release, a GitOps controller, an operator, a platform's release
// payload), "" for an object changed by hand: such an object's changes are
// recorded there, so a missing kubernetes.io/change-cause loses nothing.
func ManagedBy(m metav1.Object) string {
	if r := ReconcilerOf(m); r.Who != "" {
		return r.Who
	}
	a, l := m.GetAnnotations(), m.GetLabels()
	switch {
	case a["meta.helm.sh/release-name"] != "" || l["app.kubernetes.io/managed-by"] == "Helm":
		return "Helm"
	case a["argocd.argoproj.io/tracking-id"] != "" || l["argocd.argoproj.io/instance"] != "":
		return "Argo CD"
	case l["kustomize.toolkit.fluxcd.io/name"] != "" || l["helm.toolkit.fluxcd.io/name"] != "":
		return "Flux"
	case l["app.kubernetes.io/managed-by"] != "" && l["app.kubernetes.io/managed-by"] != "kubectl" && l["app.kubernetes.io/managed-by"] != "kustomize":
		// (kubectl and kustomize apply by hand: no history of their own.)
		return l["app.kubernetes.io/managed-by"]
	}
	for k := range a {
		if strings.HasPrefix(k, "include.release.openshift.io/") {
			return "the OpenShift release payload"
		}
	}
	if c := metav1.GetControllerOf(m); c != nil {
		return c.Kind + " " + c.Name
	}
	return ""
}
