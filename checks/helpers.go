package checks

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// since is kubectl's age format ("4d", "25m") for how long ago t was,
// "" for a zero time.
func since(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// forDuration is " for 4d" or "".
func forDuration(now time.Time, t metav1.Time) string {
	if s := since(now, t); s != "" {
		return " for " + s
	}
	return ""
}
