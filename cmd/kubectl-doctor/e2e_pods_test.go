package main_test

import "github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"

// podsWant holds what the scenarios must produce for workload-pods, and the
// StatefulSet storm of pod-storm and the webhook chain of admission-webhooks
// (see scenarioWant). Findings of a check are listed in report order:
// severity (critical first), then namespace, then name.
var podsWant = map[string][]wantFinding{
	// testdata/scenarios/everyday-pods: web's ReplicaSet crash-loops, db-0's
	// image tag does not exist, the bare pod worker is OOM-killed, api misses
	// its ConfigMap; retention-guard-0 is folded into its webhook's finding;
	// stable, warming and report-29112 stay quiet. testdata/scenarios/rollout-history:
	// checkout's rollout is stuck (its new pods wait for a node: no cause).
	"workload-pods": {
		{doctor.Critical, "ep-shop/statefulset/db", `^0 of 1 replicas available: 1 pod is unable to pull the image for [34]\dm: container postgres: image registry\.example\.com/shop/postgres:17\.9-missing is not found: the tag or repository does not exist \(ImagePullBackOff: .*\)$`, 1},
		{doctor.Critical, "ep-shop/replicaset/web-7d4b9c", `^0 of 3 replicas available: 3 pods are crash-looping for [45]\dm: container app restarted 14 times, last exit code 1 \(application error\); last termination message: "panic: DATABASE_URL is not set"$`, 3},
		{doctor.Warning, "ep-shop/pod/api", `^1 pod is unable to start for [23]\dm: container app cannot be created: configmap api-settings does not exist \(CreateContainerConfigError\)$`, 1},
		{doctor.Warning, "ep-shop/pod/worker", `^1 pod is OOM-killed for [23]\dm: container worker was killed for exceeding its memory \(limit 256Mi, request 128Mi\), 9 restarts$`, 1},
		// testdata/scenarios/everyday-causes: causes read from Warning
		// events (recorded) and real FailedCreate refusals by the
		// controllers; veteran, files-holder, the suspended CronJob
		// nightly and the ExternalName Service billing-api stay quiet.
		{doctor.Critical, "ec-secure/statefulset/priv", `^0 of 1 replicas available: statefulset priv has 0 of 1 pods: the API server refuses to create them: the namespace enforces Pod Security "restricted:latest": privileged`, 1},
		{doctor.Warning, "ec-apps/pod/gateway", `^1 pod is crash-looping for [45]\dm: container proxy restarted 9 times, last exit code 137 \(SIGKILL, not an OOM kill: [^)]*\); the kubelet kills it after failed liveness probes \(httpGet :8080/healthz, timeout \d+s, every \d+s, \d+ failures\): "Liveness probe failed: Get .*" \(x27\)$`, 1},
		{doctor.Warning, "ec-batch/pod/indexer", `^1 pod is crash-looping for [34]\dm: container index restarted 4 times, last exit code 137 \(SIGKILL, not an OOM kill: killed from outside, e\.g\. after failed liveness probes or ignoring SIGTERM\)$`, 1},
		{doctor.Warning, "ec-docs/pod/reports", `^1 pod is not starting for [23]\dm: volume settings cannot be mounted: configmap report-settings does not exist \(FailedMount\); containers: render waiting \(ContainerCreating\)$`, 1},
		{doctor.Warning, "ec-files/pod/files-new", `^1 pod is not starting for [34]\dm: volume pvc-ec1 is ReadWriteOnce and still attached to another node, used by pod files-holder on node ec-node-1 \(FailedAttachVolume: .*\); containers: app waiting \(ContainerCreating\)$`, 1},
		{doctor.Warning, "shop/deployment/checkout", `^rollout of revision 2 is stuck \(ProgressDeadlineExceeded \d+(?:m\d+s|[sm]) ago\): \d of 3 replicas updated, 0 available; ReplicaSet "checkout-[a-z0-9]+" has timed out progressing\.$`, 1},
	},
}

// podsWantExtra are findings of checks other areas own, appended to theirs.
var podsWantExtra = map[string][]wantFinding{
	"pod-storm": {
		{doctor.Critical, "vault/statefulset/vault", `^statefulset vault recreated its pod vault-0 240 times in 28m \(~9/min\), newest [\dms]+ ago: the kubelet rejects it for OutOfmemory on ep-cp-1; the StatefulSet controller deletes each Failed pod`, 240},
	},
	// rollout-history: statefulset ec-secure/priv is at its first
	// revision, with nothing to roll back to: no change-cause note.
	"admission-webhooks": {
		{doctor.Warning, "validatingwebhookconfiguration/retention-guard", `^webhook retention-guard\.example\.io \(failurePolicy Ignore, timeout 2s\): service ep-shop/retention-guard has no ready endpoint \(pod/retention-guard-0 is running but not ready\): every matching DELETE of cronjobs silently skips the policy`, 1},
	},
}

// podsCommands are remediation commands the scenario's findings must carry.
var podsCommands = map[string]string{
	"ep-shop/replicaset/web-7d4b9c": "kubectl logs -n ep-shop rs/web-7d4b9c -c app --previous",
	"ep-shop/pod/worker":            "kubectl logs -n ep-shop pod/worker -c worker --previous",
	"ep-shop/pod/api":               "kubectl create configmap api-settings -n ep-shop --from-file=<path>",
	"vault/statefulset/vault":       "kubectl describe node ep-cp-1",
	"shop/deployment/checkout":      "kubectl rollout undo deployment/checkout -n shop --to-revision=1",
}
