package snapshot

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every resource the loader knows (but events and /metrics) is readable by
// name, so a resource added to known is usable by custom checks at once.
func TestLookupCoversEveryKnownResource(t *testing.T) {
	for _, r := range known {
		got, err := Lookup(r.String())
		switch {
		case r.Kind == "Event":
			if err == nil {
				t.Error("events must not be readable whole")
			}
		case err != nil || got != r:
			t.Errorf("Lookup(%q) = %v, %v", r.String(), got, err)
		}
	}
	for name, want := range map[string]Resource{"deployments": Deployments, "pods": Pods, "ingresses.networking.k8s.io": Ingresses,
		"persistentvolumeclaims": PersistentVolumeClaims} {
		if got, err := Lookup(name); err != nil || got != want {
			t.Errorf("Lookup(%q) = %v, %v", name, got, err)
		}
	}
	if _, err := Lookup("secrets"); err == nil || !strings.Contains(err.Error(), `unknown resource "secrets" (known: `) {
		t.Errorf("Lookup(secrets) = %v", err)
	}
}

func TestObjectsAndResourceFor(t *testing.T) {
	s, err := FromObjects(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "d"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	if objs := s.Objects(Deployments); len(objs) != 1 || objs[0].(*appsv1.Deployment).Name != "d" {
		t.Errorf("deployments: %v", objs)
	}
	if objs := s.Objects(Pods); len(objs) != 1 || objs[0].(*corev1.Pod).Name != "p" {
		t.Errorf("pods: %v", objs)
	}
	if r, ok := ResourceFor("apps", "Deployment"); !ok || r != Deployments {
		t.Errorf("ResourceFor(apps, Deployment) = %v, %v", r, ok)
	}
	if _, ok := ResourceFor("", "Deployment"); ok {
		t.Error("Deployment is not in the core group")
	}
}
