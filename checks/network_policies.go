package checks

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// NetworkPolicies reports NetworkPolicies whose combined effect cuts pods
// off from cluster DNS, and policies (or their rules' peers) that select
// nothing where something was meant.
var NetworkPolicies = &doctor.Check{
	Name:     "network-policies",
	Severity: doctor.Warning,
	Origin:   "peer coverage map",
	// Namespaces give namespaceSelectors their labels: without them (a user
	// with a Role on one namespace) a selector on labels other than the
	// name cannot be judged and is given the benefit of the doubt.
	Reads:    []snapshot.Resource{snapshot.NetworkPolicies, snapshot.Pods},
	Optional: append([]snapshot.Resource{snapshot.Namespaces}, kube.WorkloadReads...),
	Run:      runNetworkPolicies,
	Doc: `NetworkPolicies that cut pods off from DNS, or select no pod where one was meant

## Why it matters
NetworkPolicies add up: once any policy with an ` + "`Egress`" + ` type selects a pod,
the pod may only send what some policy's egress rules allow. The classic
outage is a namespace-wide "default deny egress" without a rule that lets
pods reach the cluster DNS: every lookup times out, every client of a
Service by name fails, and nothing in the pods' status says why. Policies
are also matched by labels only: a ` + "`podSelector`" + ` with a typo selects nothing
(the pods it was meant to protect are open), and an ` + "`ingress.from`" + ` peer that
matches no pod or namespace allows nothing (the traffic it was meant to let
in is dropped).

## How it is detected
Policies, pods and namespaces are listed. For every live pod, the
policies that select it and isolate its egress (` + "`policyTypes`" + ` with ` + "`Egress`" + `,
or egress rules when policyTypes is unset) are combined; the pod can reach
DNS when one of their rules allows UDP port 53 (or all ports, or a named
port) to a peer that may hold the cluster DNS pods: no ` + "`to`" + ` at all, an
` + "`ipBlock`" + ` (node-local DNS caches and addresses cannot be judged from the API,
so they are given the benefit of the doubt), or a namespace and pod
selector matching the DNS pods (pods labelled ` + "`k8s-app=kube-dns`" + `; in
` + "`kube-system`" + ` when none is listed). Pods cut off are grouped by namespace and
set of policies, with their owners: a warning. Separately, as info: a
policy whose non-empty podSelector selects no live pod (unless a workload
scaled to zero would match it), and an ingress or egress peer whose
podSelector (same namespace) or namespaceSelector matches nothing, or whose
podSelector matches no pod in the namespaces its namespaceSelector matches.

Without namespaces (a user with a Role on one namespace may not list them)
the check still runs: a namespaceSelector on the namespace's name
(` + "`kubernetes.io/metadata.name`" + `, which every namespace carries) is judged as
always, one on other labels is given the benefit of the doubt (no DNS
verdict, no empty-peer verdict).

## How to fix
Allow DNS to every pod the egress policies isolate, in the namespace:
an egress rule to ` + "`namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}`" + `
and ` + "`podSelector: {matchLabels: {k8s-app: kube-dns}}`" + ` on UDP and TCP port 53.
Fix selectors that match nothing to the labels the pods carry
(` + "`kubectl get pods --show-labels`" + `).

## References
- https://kubernetes.io/docs/concepts/services-networking/network-policies/#default-deny-all-egress-traffic
- https://kubernetes.io/docs/concepts/services-networking/network-policies/#behavior-of-to-and-from-selectors
- https://kubernetes.io/docs/concepts/services-networking/network-policies/#targeting-a-namespace-by-its-name`,
}

// dnsTarget is where cluster DNS runs: a namespace's labels and a pod's.
type dnsTarget struct {
	ns        string
	nsLabels  labels.Set
	podLabels labels.Set
}

func runNetworkPolicies(p *doctor.Pass) error {
	nsLabels := map[string]labels.Set{}
	for _, ns := range p.Snapshot.Namespaces() {
		l := labels.Set{}
		for k, v := range ns.Labels {
			l[k] = v
		}
		l["kubernetes.io/metadata.name"] = ns.Name // set by the API server on every namespace
		nsLabels[ns.Name] = l
	}
	labelsOf := func(ns string) labels.Set {
		if l, ok := nsLabels[ns]; ok {
			return l
		}
		return labels.Set{"kubernetes.io/metadata.name": ns}
	}
	var targets []dnsTarget
	for _, pod := range p.Snapshot.Pods() {
		if pod.Labels["k8s-app"] == "kube-dns" && !kube.Terminal(pod) {
			targets = append(targets, dnsTarget{pod.Namespace, labelsOf(pod.Namespace), labels.Set(pod.Labels)})
		}
	}
	if len(targets) == 0 {
		targets = []dnsTarget{{"kube-system", labelsOf("kube-system"), labels.Set{"k8s-app": "kube-dns"}}}
	}

	pols := p.Snapshot.NetworkPolicies()
	sort.SliceStable(pols, func(i, j int) bool {
		if pols[i].Namespace != pols[j].Namespace {
			return pols[i].Namespace < pols[j].Namespace
		}
		return pols[i].Name < pols[j].Name
	})
	// Which egress-isolating policies select each pod.
	egress := map[*corev1.Pod][]*networkingv1.NetworkPolicy{}
	var podOrder []*corev1.Pod
	for i := range pols {
		np := &pols[i]
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil {
			continue
		}
		var pods []*corev1.Pod
		for _, pod := range kube.PodsIn(p.Snapshot, np.Namespace) {
			if pod.DeletionTimestamp == nil && !kube.Terminal(pod) && sel.Matches(labels.Set(pod.Labels)) {
				pods = append(pods, pod)
			}
		}
		ref := kube.Ref("networking.k8s.io/v1", "NetworkPolicy", np)
		if len(pods) == 0 && !sel.Empty() && kube.ScaledToZero(p.Snapshot, np.Namespace, sel) == nil {
			p.Report(doctor.Finding{Severity: doctor.Info, Object: ref, Cause: "selects-nothing",
				Message: fmt.Sprintf("networkpolicy %s selects no pod (%s): it restricts nothing; the pods it was meant for are not covered by it", np.Name, sel.String()),
				Remediation: []doctor.Remediation{
					{Text: "compare its podSelector with the pods' labels", Command: fmt.Sprintf("kubectl get pods -n %s --show-labels", np.Namespace)},
					{Text: "fix the selector, or delete a leftover policy", Command: fmt.Sprintf("kubectl edit networkpolicy %s -n %s", np.Name, np.Namespace)}}})
		}
		reportEmptyPeers(p, np, ref, nsLabels, targets)
		if !isolatesEgress(np) {
			continue
		}
		for _, pod := range pods {
			if _, ok := egress[pod]; !ok {
				podOrder = append(podOrder, pod)
			}
			egress[pod] = append(egress[pod], np)
		}
	}

	type group struct {
		ns   string
		pols []*networkingv1.NetworkPolicy
		pods []*corev1.Pod
	}
	groups := map[string]*group{}
	var keys []string
	for _, pod := range podOrder {
		nps := egress[pod]
		if allowsDNS(nps, pod.Namespace, targets, labelsOf, p.Snapshot.Err(snapshot.Namespaces) == nil) {
			continue
		}
		var names []string
		for _, np := range nps {
			names = append(names, np.Name)
		}
		key := pod.Namespace + "/" + strings.Join(names, ",")
		if groups[key] == nil {
			groups[key] = &group{ns: pod.Namespace, pols: nps}
			keys = append(keys, key)
		}
		groups[key].pods = append(groups[key].pods, pod)
	}
	sort.Strings(keys)
	for _, key := range keys {
		g := groups[key]
		var names, podNames []string
		for _, np := range g.pols {
			names = append(names, np.Name)
		}
		for _, pod := range g.pods {
			podNames = append(podNames, pod.Name)
		}
		first := g.pols[0]
		what := "policy " + names[0] + " isolates"
		if len(names) > 1 {
			what = "policies " + strings.Join(names, ", ") + " isolate"
		}
		p.Report(doctor.Finding{Object: kube.Ref("networking.k8s.io/v1", "NetworkPolicy", first), Cause: "no-dns",
			Count: len(g.pods), Examples: doctor.Examples(podNames),
			Message: fmt.Sprintf("network %s the egress of %s (%s) and no egress rule allows DNS (UDP 53) to the cluster DNS pods: every name lookup times out, so they cannot reach Services by name",
				what, doctor.Plural(len(g.pods), "pod", "pods"), strings.Join(ownerNames(p.Snapshot, g.pods), "; ")),
			Remediation: []doctor.Remediation{
				{Text: "allow DNS to the cluster DNS pods for the isolated pods (or the whole namespace)", Command: fmt.Sprintf(`kubectl apply -n %s -f - <<'EOF'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-dns}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
  - to:
    - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}
      podSelector: {matchLabels: {k8s-app: kube-dns}}
    ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
EOF`, g.ns)},
				{Text: "review the egress rules that apply", Command: fmt.Sprintf("kubectl describe networkpolicy -n %s %s", g.ns, strings.Join(names, " "))}}})
	}
	return nil
}

// isolatesEgress follows the API's defaulting of policyTypes: Ingress
// always, Egress when the policy has egress rules.
func isolatesEgress(np *networkingv1.NetworkPolicy) bool {
	if len(np.Spec.PolicyTypes) == 0 {
		return len(np.Spec.Egress) > 0
	}
	for _, t := range np.Spec.PolicyTypes {
		if t == networkingv1.PolicyTypeEgress {
			return true
		}
	}
	return false
}

// allowsDNS says whether any egress rule of the policies lets a pod of ns
// send UDP 53 to a DNS pod.
func allowsDNS(nps []*networkingv1.NetworkPolicy, ns string, targets []dnsTarget, labelsOf func(string) labels.Set, namespacesKnown bool) bool {
	for _, np := range nps {
		for _, rule := range np.Spec.Egress {
			if !allowsPort53(rule.Ports) {
				continue
			}
			if len(rule.To) == 0 {
				return true
			}
			for _, peer := range rule.To {
				if peer.IPBlock != nil {
					return true // cannot be judged: give it the benefit of the doubt
				}
				if peer.NamespaceSelector != nil && !namespacesKnown && selectsBeyondName(peer.NamespaceSelector) {
					return true // namespaces not read: their labels are unknown
				}
				for _, t := range targets {
					if peerMatches(peer, ns, t) {
						return true
					}
				}
			}
		}
	}
	return false
}

func allowsPort53(ports []networkingv1.NetworkPolicyPort) bool {
	if len(ports) == 0 {
		return true
	}
	for _, pt := range ports {
		if pt.Protocol != nil && *pt.Protocol != corev1.ProtocolUDP {
			continue
		}
		if pt.Port == nil || pt.Port.StrVal != "" {
			return true // all ports, or a named port (CoreDNS names its port dns)
		}
		lo, hi := pt.Port.IntVal, pt.Port.IntVal
		if pt.EndPort != nil {
			hi = *pt.EndPort
		}
		if lo <= 53 && 53 <= hi {
			return true
		}
	}
	return false
}

// peerMatches says whether a peer of a policy in ns selects the DNS target.
func peerMatches(peer networkingv1.NetworkPolicyPeer, ns string, t dnsTarget) bool {
	if peer.NamespaceSelector == nil {
		if t.ns != ns {
			return false
		}
	} else {
		sel, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
		if err != nil || !sel.Matches(t.nsLabels) {
			return false
		}
	}
	if peer.PodSelector == nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
	return err == nil && sel.Matches(t.podLabels)
}

// reportEmptyPeers reports rule peers that match nothing: a podSelector
// alone (this namespace's pods) that no live pod matches, or a
// namespaceSelector no namespace matches. Only when pods and namespaces
// were listed whole (a cluster-wide scan), so that absence means absence.
func reportEmptyPeers(p *doctor.Pass, np *networkingv1.NetworkPolicy, ref doctor.ObjectRef, nsLabels map[string]labels.Set, dns []dnsTarget) {
	var empty []string
	check := func(dir string, peers []networkingv1.NetworkPolicyPeer) {
		for _, peer := range peers {
			isDNS := false
			for _, t := range dns {
				isDNS = isDNS || peerMatches(peer, np.Namespace, t)
			}
			switch {
			case isDNS:
				// The cluster DNS, where it runs (or would, by its usual
				// labels, when its pods are not listed): not a mistake.
			case peer.IPBlock != nil:
			case peer.NamespaceSelector != nil:
				if p.Snapshot.Namespace != "" || len(nsLabels) == 0 {
					continue
				}
				sel, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
				if err != nil || sel.Empty() {
					continue
				}
				var matched []string
				for name, l := range nsLabels {
					if sel.Matches(l) {
						matched = append(matched, name)
					}
				}
				if len(matched) == 0 {
					empty = append(empty, fmt.Sprintf("%s namespaceSelector %s matches no namespace", dir, sel.String()))
					continue
				}
				if peer.PodSelector == nil {
					continue
				}
				psel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
				if err != nil || psel.Empty() {
					continue
				}
				found := false
				for _, ns := range matched {
					if len(kube.Selected(p.Snapshot, ns, psel)) > 0 || kube.ScaledToZero(p.Snapshot, ns, psel) != nil {
						found = true
						break
					}
				}
				if !found {
					empty = append(empty, fmt.Sprintf("%s podSelector %s matches no pod in the namespaces its namespaceSelector %s matches", dir, psel.String(), sel.String()))
				}
			case peer.PodSelector != nil:
				sel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
				if err != nil || sel.Empty() {
					continue
				}
				if len(kube.Selected(p.Snapshot, np.Namespace, sel)) == 0 && kube.ScaledToZero(p.Snapshot, np.Namespace, sel) == nil {
					empty = append(empty, fmt.Sprintf("%s podSelector %s matches no pod of namespace %s", dir, sel.String(), np.Namespace))
				}
			}
		}
	}
	for _, r := range np.Spec.Ingress {
		check("ingress from", r.From)
	}
	for _, r := range np.Spec.Egress {
		check("egress to", r.To)
	}
	if len(empty) == 0 {
		return
	}
	p.Report(doctor.Finding{Severity: doctor.Info, Object: ref, Cause: "empty-peer",
		Message: fmt.Sprintf("networkpolicy %s allows traffic from or to peers that match nothing: %s; the traffic they were meant to allow is dropped", np.Name, strings.Join(empty, "; ")),
		Remediation: []doctor.Remediation{
			{Text: "compare the peers with the labels pods and namespaces carry", Command: "kubectl get pods,namespaces -A --show-labels"},
			{Text: "fix the peer selectors", Command: fmt.Sprintf("kubectl edit networkpolicy %s -n %s", np.Name, np.Namespace)}}})
}

// selectsBeyondName: a namespace selector that needs a namespace's labels,
// not only the kubernetes.io/metadata.name every namespace carries.
func selectsBeyondName(sel *metav1.LabelSelector) bool {
	for k := range sel.MatchLabels {
		if k != corev1.LabelMetadataName {
			return true
		}
	}
	for _, e := range sel.MatchExpressions {
		if e.Key != corev1.LabelMetadataName {
			return true
		}
	}
	return false
}
