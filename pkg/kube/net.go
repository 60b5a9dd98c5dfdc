package kube

import (
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

type podsByNamespaceKey struct{}

// PodsIn returns the snapshot's pods of one namespace, indexed once per
// snapshot, in list order.
func PodsIn(s *snapshot.Snapshot, namespace string) []*corev1.Pod {
	return snapshot.Memo(s, podsByNamespaceKey{}, func() map[string][]*corev1.Pod {
		out := map[string][]*corev1.Pod{}
		for _, p := range s.Pods() {
			out[p.Namespace] = append(out[p.Namespace], p)
		}
		return out
	})[namespace]
}

// Selected returns the namespace's pods the selector matches, skipping pods
// being deleted. A nil or empty selector selects nothing, as Services and
// PodDisruptionBudgets treat it for this purpose.
func Selected(s *snapshot.Snapshot, namespace string, sel labels.Selector) []*corev1.Pod {
	if sel == nil || sel.Empty() {
		return nil
	}
	var out []*corev1.Pod
	for _, p := range PodsIn(s, namespace) {
		if p.DeletionTimestamp == nil && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

// PodReady reports the pod's Ready condition, and since when it has had
// that value.
func PodReady(p *corev1.Pod) (ready bool, since metav1.Time) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue, c.LastTransitionTime
		}
	}
	return false, p.CreationTimestamp
}

// Ready says the pod's Ready condition is True.
func Ready(p *corev1.Pod) bool {
	ready, _ := PodReady(p)
	return ready
}

// Terminal is true for a pod that has finished (Succeeded or Failed): it
// holds no resources and will never serve again.
func Terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// NearMiss is a group of pods that an equality selector (a Service's) misses
// by exactly one label: Key is the label, Want the selector's value, Have the
// pods' value ("" when they lack the label).
type NearMiss struct {
	Key, Want, Have string
	Pods            []*corev1.Pod
}

// NearMisses finds the namespace's live pods that match every key of the
// equality selector but one, grouped by the label and value that differ,
// most pods first. A selector of one key misses every other pod by that
// key, which is no signal: there a pod nearly matches only when it carries
// the key with a value that looks like a typo of the selector's
// (SimilarLabelValue: "chekout", "checkout-svc" for "checkout").
func NearMisses(s *snapshot.Snapshot, namespace string, selector map[string]string) []NearMiss {
	if len(selector) == 0 {
		return nil
	}
	groups := map[[2]string]*NearMiss{}
	for _, p := range PodsIn(s, namespace) {
		if p.DeletionTimestamp != nil || Terminal(p) {
			continue
		}
		var off []string
		for k, v := range selector {
			if p.Labels[k] != v {
				off = append(off, k)
			}
		}
		if len(off) != 1 {
			continue
		}
		k := off[0]
		if len(selector) == 1 && !SimilarLabelValue(selector[k], p.Labels[k]) {
			continue
		}
		key := [2]string{k, p.Labels[k]}
		if groups[key] == nil {
			groups[key] = &NearMiss{Key: k, Want: selector[k], Have: p.Labels[k]}
		}
		groups[key].Pods = append(groups[key].Pods, p)
	}
	out := make([]NearMiss, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].Pods) != len(out[j].Pods) {
			return len(out[i].Pods) > len(out[j].Pods)
		}
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Have < out[j].Have
	})
	return out
}

// SimilarLabelValue says two different label values look like one meant
// for the other: the same but for letter case, one the other with a
// separated prefix or suffix ("checkout-svc", "checkout-v2", "eu-checkout"
// for "checkout"), or a small typo (an edit distance of 1, or 2 for values
// of eight characters or more, counting a swap of adjacent letters as
// one). An empty value (the label is missing) is never similar.
func SimilarLabelValue(a, b string) bool {
	if a == "" || b == "" || a == b {
		return false
	}
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la == lb {
		return true
	}
	short, long := la, lb
	if len(short) > len(long) {
		short, long = long, short
	}
	if len(short) >= 3 {
		for _, sep := range "-_." {
			if strings.HasPrefix(long, short+string(sep)) || strings.HasSuffix(long, string(sep)+short) {
				return true
			}
		}
	}
	limit := 1
	if len(short) >= 8 {
		limit = 2
	}
	if len(short) < 4 {
		// "api" and "app" differ by one letter and are different names.
		return false
	}
	return editDistance(la, lb, limit) <= limit
}

// editDistance is the optimal-string-alignment distance of a and b (a swap
// of adjacent characters counts one), or limit+1 when it is larger.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	if d := prev[len(rb)]; d <= limit {
		return d
	}
	return limit + 1
}

// SelectorString is an equality selector as kubectl takes it: "app=web,tier=front".
func SelectorString(sel map[string]string) string {
	return labels.SelectorFromSet(sel).String()
}

// APIServiceAvailable is the APIService's Available condition, or nil.
func APIServiceAvailable(a *apiregistrationv1.APIService) *apiregistrationv1.APIServiceCondition {
	for i := range a.Status.Conditions {
		if a.Status.Conditions[i].Type == apiregistrationv1.Available {
			return &a.Status.Conditions[i]
		}
	}
	return nil
}

// APIServiceDown says the APIService's Available condition is there and
// not True: the aggregator cannot reach its backend. (No condition yet is
// not a verdict.)
func APIServiceDown(a *apiregistrationv1.APIService) bool {
	c := APIServiceAvailable(a)
	return c != nil && c.Status != apiregistrationv1.ConditionTrue
}

// UnavailableAPIService returns an APIService of the group whose Available
// condition is not True (the first by name), or nil.
func UnavailableAPIService(s *snapshot.Snapshot, group string) *apiregistrationv1.APIService {
	as := s.APIServices()
	var out *apiregistrationv1.APIService
	for i := range as {
		a := &as[i]
		if a.Spec.Group != group {
			continue
		}
		if APIServiceDown(a) && (out == nil || a.Name < out.Name) {
			out = a
		}
	}
	return out
}

// ScaledToZero returns a Deployment or StatefulSet of the namespace whose
// pod template the selector matches and which is scaled to zero on
// purpose, or nil: a Service or budget in front of it matching no pod is
// expected, not a problem.
func ScaledToZero(s *snapshot.Snapshot, namespace string, sel labels.Selector) *Workload {
	if sel == nil || sel.Empty() {
		return nil
	}
	// Scaled to zero only when every Deployment and StatefulSet it
	// selects is: the parked half of a blue/green pair is not the
	// Service's story while the other half runs.
	var zero *Workload
	for w := range Workloads(s) {
		if w.Ref.Namespace != namespace || w.Spec == nil {
			continue
		}
		var replicas *int32
		var tmpl map[string]string
		switch o := w.Object.(type) {
		case *appsv1.Deployment:
			replicas, tmpl = o.Spec.Replicas, o.Spec.Template.Labels
		case *appsv1.StatefulSet:
			replicas, tmpl = o.Spec.Replicas, o.Spec.Template.Labels
		default:
			continue
		}
		if !sel.Matches(labels.Set(tmpl)) {
			continue
		}
		if replicas == nil || *replicas > 0 {
			return nil
		}
		if zero == nil {
			zero = w
		}
	}
	return zero
}
