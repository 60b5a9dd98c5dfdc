package offline_test

import (
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/offline"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestRemovedVersions: objects of removed API versions, as older servers
// wrote them, decode into the versions checks read with the fields that
// moved put where checks look for them.
func TestRemovedVersions(t *testing.T) {
	in := `
apiVersion: batch/v1beta1
kind: CronJob
metadata: {name: nightly, namespace: ops}
spec:
  schedule: "0 3 * * *"
  concurrencyPolicy: Forbid
  jobTemplate: {spec: {activeDeadlineSeconds: 60, template: {spec: {containers: [{name: c, image: i}]}}}}
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: none, namespace: ops}
spec: {selector: {}, minAvailable: 1}
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: web, namespace: ops}
spec: {selector: {matchLabels: {app: web}}, maxUnavailable: 1}
---
apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: shop, namespace: ops}
spec:
  backend: {serviceName: default-http, servicePort: 80}
  rules:
  - host: shop.example
    http:
      paths:
      - {path: /, backend: {serviceName: web, servicePort: http}}
status: {loadBalancer: {ingress: [{ip: 10.0.0.1}]}}
---
apiVersion: autoscaling/v2beta2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: ops}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}}]
---
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: api, namespace: ops}
spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}, maxReplicas: 3, targetCPUUtilizationPercentage: 50}
---
apiVersion: autoscaling/v2beta1
kind: HorizontalPodAutoscaler
metadata: {name: old, namespace: ops}
spec: {scaleTargetRef: {kind: Deployment, name: old}, maxReplicas: 3, metrics: [{type: Resource, resource: {name: cpu, targetAverageUtilization: 50}}]}
---
apiVersion: extensions/v1beta1
kind: Deployment
metadata: {name: legacy, namespace: ops}
spec: {replicas: 2, rollbackTo: {revision: 1}, template: {metadata: {labels: {app: legacy}}, spec: {containers: [{name: c, image: i}]}}}
---
apiVersion: apps/v1beta2
kind: StatefulSet
metadata: {name: db, namespace: ops}
spec: {serviceName: db, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: i}]}}}
---
apiVersion: discovery.k8s.io/v1beta1
kind: EndpointSlice
metadata: {name: web-abc, namespace: ops, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints:
- addresses: [10.1.0.5]
  conditions: {ready: true}
  topology: {kubernetes.io/hostname: node-1, topology.kubernetes.io/zone: z1}
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingWebhookConfiguration
metadata: {name: inject}
webhooks:
- name: inject.example.io
  failurePolicy: Fail
  timeoutSeconds: 30
  clientConfig: {service: {namespace: ops, name: injector}}
---
apiVersion: apiregistration.k8s.io/v1beta1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec: {group: metrics.k8s.io, version: v1beta1, service: {namespace: kube-system, name: metrics-server}, groupPriorityMinimum: 100, versionPriority: 100}
status: {conditions: [{type: Available, status: "False", reason: MissingEndpoints}]}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1beta2
kind: PriorityLevelConfiguration
metadata: {name: workload-low}
spec: {type: Limited, limited: {assuredConcurrencyShares: 100, limitResponse: {type: Reject}}}
---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: e1, namespace: ops}
regarding: {kind: Pod, name: web-1, namespace: ops}
note: "0/3 nodes are available"
reason: FailedScheduling
type: Warning
deprecatedCount: 4
reportingController: default-scheduler
eventTime: "2024-03-01T10:00:00.000000Z"
`
	res := mustLoad(t, writeFile(t, "old.yaml", in), offline.Options{})
	s := res.Snapshot

	if cj := s.CronJobs(); len(cj) != 1 || cj[0].Spec.Schedule != "0 3 * * *" || string(cj[0].Spec.ConcurrencyPolicy) != "Forbid" ||
		*cj[0].Spec.JobTemplate.Spec.ActiveDeadlineSeconds != 60 {
		t.Errorf("CronJob: %+v", cj)
	}
	pdbs := map[string]bool{}
	for _, p := range s.PodDisruptionBudgets() {
		sel, err := metav1LabelSelector(p.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		pdbs[p.Name] = sel.Matches(labels.Set{"app": "web"})
	}
	// v1beta1's empty selector matched nothing; v1's would match all.
	if pdbs["none"] || !pdbs["web"] || len(pdbs) != 2 {
		t.Errorf("PDB selectors after conversion (matches app=web): %v", pdbs)
	}
	ing := s.Ingresses()
	if len(ing) != 1 || ing[0].Spec.DefaultBackend.Service.Name != "default-http" || ing[0].Spec.DefaultBackend.Service.Port.Number != 80 ||
		ing[0].Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Name != "http" || *ing[0].Spec.Rules[0].HTTP.Paths[0].PathType != "ImplementationSpecific" ||
		ing[0].Status.LoadBalancer.Ingress[0].IP != "10.0.0.1" {
		t.Errorf("Ingress: %+v", ing)
	}
	hpas := map[string]int32{}
	for _, h := range s.HorizontalPodAutoscalers() {
		if len(h.Spec.Metrics) == 1 && h.Spec.Metrics[0].Resource != nil {
			hpas[h.Name] = *h.Spec.Metrics[0].Resource.Target.AverageUtilization
		}
	}
	if hpas["web"] != 70 || hpas["api"] != 50 || len(s.HorizontalPodAutoscalers()) != 2 {
		t.Errorf("HPAs: %v", hpas)
	}
	if res.Stats.Unconverted["autoscaling/v2beta1 HorizontalPodAutoscalers: metric targets in a removed format, not converted"] != 1 {
		t.Errorf("v2beta1 HPA not skipped with a reason: %v", res.Stats.Unconverted)
	}
	if d := s.Deployments(); len(d) != 1 || d[0].Spec.Selector == nil || d[0].Spec.Selector.MatchLabels["app"] != "legacy" {
		t.Errorf("extensions/v1beta1 Deployment selector not defaulted: %+v", d)
	}
	if ss := s.StatefulSets(); len(ss) != 1 || ss[0].Spec.ServiceName != "db" {
		t.Errorf("StatefulSet: %+v", ss)
	}
	if es := s.EndpointSlices(); len(es) != 1 || es[0].Endpoints[0].NodeName == nil || *es[0].Endpoints[0].NodeName != "node-1" ||
		*es[0].Endpoints[0].Zone != "z1" || !*es[0].Endpoints[0].Conditions.Ready {
		t.Errorf("EndpointSlice: %+v", es)
	}
	if w := s.MutatingWebhookConfigurations(); len(w) != 1 || *w[0].Webhooks[0].TimeoutSeconds != 30 || w[0].Webhooks[0].ClientConfig.Service.Name != "injector" {
		t.Errorf("webhook: %+v", w)
	}
	if a := s.APIServices(); len(a) != 1 || a[0].Spec.Service.Name != "metrics-server" || a[0].Status.Conditions[0].Reason != "MissingEndpoints" {
		t.Errorf("APIService: %+v", a)
	}
	if p := s.PriorityLevels(); len(p) != 1 || p[0].Spec.Limited.NominalConcurrencyShares == nil || *p[0].Spec.Limited.NominalConcurrencyShares != 100 {
		t.Errorf("PriorityLevelConfiguration: %+v", p)
	}
	if e := s.Events("reason=FailedScheduling"); len(e) != 1 || e[0].InvolvedObject.Name != "web-1" || e[0].Message != "0/3 nodes are available" ||
		e[0].Count != 4 || e[0].ReportingController != "default-scheduler" {
		t.Errorf("events.k8s.io Event: %+v", e)
	}
	if n := res.Stats.Converted["batch/v1beta1 CronJob"]; n != 1 {
		t.Errorf("converted %v", res.Stats.Converted)
	}
	if s.Err(snapshot.CronJobs) != nil {
		t.Error("cronjobs not present")
	}
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	root := writeTree(t, map[string]string{name: body})
	return filepath.Join(root, name)
}

func metav1LabelSelector(sel *metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(sel)
}

// TestAddOnOldVersions: Flux objects from before Flux 2.3 (HelmRelease
// v2beta1/v2beta2) and 2.0 (Kustomization v1beta2), and ESO objects from
// before 0.16.2 (v1beta1), are read as the versions gitops-sync and
// external-secrets judge, with their conditions.
func TestAddOnOldVersions(t *testing.T) {
	in := `
apiVersion: helm.toolkit.fluxcd.io/v2beta1
kind: HelmRelease
metadata: {name: redis, namespace: cache}
spec: {interval: 5m, suspend: true}
status:
  conditions: [{type: Ready, status: "False", reason: UpgradeFailed, message: boom, lastTransitionTime: "2024-01-01T00:00:00Z"}]
---
apiVersion: helm.toolkit.fluxcd.io/v2beta2
kind: HelmRelease
metadata: {name: pg, namespace: db}
status:
  conditions: [{type: Ready, status: "True", lastTransitionTime: "2024-01-01T00:00:00Z"}]
---
apiVersion: kustomize.toolkit.fluxcd.io/v1beta2
kind: Kustomization
metadata: {name: infra, namespace: flux-system}
status:
  lastAppliedRevision: main/abc
  conditions: [{type: Ready, status: "False", reason: BuildFailed, message: nope, lastTransitionTime: "2024-01-01T00:00:00Z"}]
---
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata: {name: db, namespace: shop}
spec: {secretStoreRef: {name: aws, kind: ClusterSecretStore}, target: {name: db-creds}}
status:
  conditions: [{type: Ready, status: "False", reason: SecretSyncedError, message: denied, lastTransitionTime: "2024-01-01T00:00:00Z"}]
---
apiVersion: external-secrets.io/v1beta1
kind: ClusterSecretStore
metadata: {name: aws}
status:
  conditions: [{type: Ready, status: "True", lastTransitionTime: "2024-01-01T00:00:00Z"}]
`
	res := mustLoad(t, writeFile(t, "old-addons.yaml", in), offline.Options{})
	snap := res.Snapshot
	hrs := snap.FluxHelmReleases()
	if len(hrs) != 2 || !hrs[0].Spec.Suspend && !hrs[1].Spec.Suspend {
		t.Fatalf("helmreleases: %+v", hrs)
	}
	if ks := snap.FluxKustomizations(); len(ks) != 1 || ks[0].Status.LastAppliedRevision != "main/abc" || len(ks[0].Status.Conditions) != 1 || ks[0].Status.Conditions[0].Reason != "BuildFailed" {
		t.Errorf("kustomizations: %+v", ks)
	}
	if es := snap.ExternalSecrets(); len(es) != 1 || es[0].TargetName() != "db-creds" || es[0].Spec.SecretStoreRef.Kind != "ClusterSecretStore" || es[0].Status.Conditions[0].Message != "denied" {
		t.Errorf("externalsecrets: %+v", es)
	}
	if cs := snap.ClusterSecretStores(); len(cs) != 1 || cs[0].Name != "aws" {
		t.Errorf("clustersecretstores: %+v", cs)
	}
	if err := snap.Err(snapshot.FluxHelmReleases); err != nil {
		t.Errorf("helmreleases read: %v", err)
	}
}
