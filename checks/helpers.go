package checks

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
)

// since is kubectl's age format ("4d", "25m") for how long ago t was,
// "" for a zero time.
func since(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return ""
	}
	return human(now.Sub(t.Time))
}

// human is kubectl's age format for d; a negative d (a timestamp after the
// scan's clock: a capture dated by an older timestamp, skewed clocks) is
// "0s", never apimachinery's "<invalid>".
func human(d time.Duration) string {
	return duration.HumanDuration(max(d, 0))
}

// forDuration is " for 4d" or "".
func forDuration(now time.Time, t metav1.Time) string {
	if s := since(now, t); s != "" {
		return " for " + s
	}
	return ""
}

// nodeMembers are the nodes a grouped finding stands for, each a problem of
// its own: a baseline or an ignore rule judges them one by one.
func nodeMembers(names []string) []doctor.ObjectRef {
	out := make([]doctor.ObjectRef, len(names))
	for i, n := range names {
		out[i] = kube.NodeRef(n)
	}
	return out
}

// members are the objects of one kind and namespace a grouped finding
// stands for.
func members(apiVersion, kind, namespace string, names []string) []doctor.ObjectRef {
	out := make([]doctor.ObjectRef, len(names))
	for i, n := range names {
		out[i] = doctor.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: n}
	}
	return out
}
