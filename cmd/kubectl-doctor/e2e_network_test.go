package main_test

import "github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"

// networkWant holds what the scenarios must produce for service-endpoints,
// ingress-backends, hpa-scaling, pdb-blocks-drain and the network part of
// admission-webhooks (see scenarioWant). Findings of a check are listed in
// report order: severity (critical first), then namespace, then name.
var networkWant = map[string][]wantFinding{
	// testdata/scenarios/everyday-network: cart's selector misses its pods by
	// one label, payments' pods are unready; web, legacy-db (no selector) and
	// mail (ExternalName) stay quiet. The backends of the seed incidents'
	// broken APIService and webhook (kube-system/metrics-server,
	// batch/sidecar-injector) select no pod either, but their findings
	// name them: they are not reported a second time.
	"service-endpoints": {
		{doctor.Warning, "net-shop/service/cart", `^service cart selects app=cart,tier=web, but no pod in namespace net-shop matches: it has no endpoint; nearly matching: 2 pods \(deployment/cart\) have tier=frontend, not web$`, 1},
		{doctor.Warning, "net-shop/service/payments", `^service payments has no ready endpoint for [45]\dm: 2 pods match app=payments \(bare pods payments-0, payments-1\), none is ready \(2 Running\)$`, 1},
	},
	"ingress-backends": {
		{doctor.Critical, "net-shop/ingress/storefront", `^ingress storefront: every backend is broken, it can only answer 503; checkout:80 \(shop\.example\.com/checkout\): service checkout does not exist; payments:http \(shop\.example\.com/pay\): service payments has no ready endpoint; web:8080 \(shop\.example\.com/\): service web has no port 8080 \(it exposes 80 \(http\)\)$`, 1},
		{doctor.Warning, "net-shop/ingress/blog", `^ingress blog: its ingressClassName "traefik" names no IngressClass \(the cluster's classes are nginx\): no controller claims it$`, 1},
	},
	"hpa-scaling": {
		{doctor.Warning, "net-shop/horizontalpodautoscaler/cart", `^hpa cart \(deployment/cart\): it scales on cpu utilization, but container app of deployment/cart declares no cpu request`, 1},
		{doctor.Warning, "net-shop/horizontalpodautoscaler/checkout", `^hpa checkout: its target deployment/checkout-v2 does not exist in namespace net-shop: it scales nothing$`, 1},
	},
	"pdb-blocks-drain": {
		{doctor.Warning, "net-shop/poddisruptionbudget/payments", `^pdb payments allows no disruption: draining the nodes of its 2 pods \(bare pods payments-0, payments-1\) waits forever, because its maxUnavailable is 0`, 1},
	},
	// A healthy webhook whose namespaceSelector excludes other namespaces
	// but not kube-system: info, never a warning.
	"admission-webhooks": {
		{doctor.Info, "validatingwebhookconfiguration/exec-audit", `^webhook exec-audit\.example\.io \(failurePolicy Ignore, timeout 2s\): it intercepts pods in kube-system: its namespaceSelector excludes openshift-etcd, openshift-kube-apiserver but not kube-system$`, 1},
	},
}
