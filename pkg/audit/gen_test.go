package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"time"
)

// The generator writes a realistic audit log with a fixed seed: kubelets and
// kube-controller-manager behave like informers (LIST with
// resourceVersion=0, then WATCH); a user runs kubectl now and then; and the
// culprit of seed 003, an in-house controller's service account, fires
// bursts of parallel LISTs of pods and nodes with label selectors and no
// resourceVersion, each a multi-second read of everything from etcd.

const culprit = "system:serviceaccount:platform:inventory-controller"

var genStart = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

type genReq struct {
	user, agent, verb, resource, group, ns, uri string
	start                                       time.Time
	latency                                     time.Duration
}

func (r genReq) line(stage string, id int) []byte {
	ts := r.start
	if stage != "RequestReceived" {
		ts = r.start.Add(r.latency)
	}
	ev := map[string]any{
		"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata", "auditID": fmt.Sprintf("id-%08d", id),
		"stage": stage, "requestURI": r.uri, "verb": r.verb,
		"user":      map[string]any{"username": r.user, "groups": []string{"system:authenticated"}},
		"userAgent": r.agent, "sourceIPs": []string{"10.0.0.1"},
		"objectRef":                map[string]any{"resource": r.resource, "namespace": r.ns, "apiGroup": r.group, "apiVersion": "v1"},
		"responseStatus":           map[string]any{"code": 200},
		"requestReceivedTimestamp": r.start.Format(time.RFC3339Nano),
		"stageTimestamp":           ts.Format(time.RFC3339Nano),
	}
	b, _ := json.Marshal(ev)
	return append(b, '\n')
}

func path(group, resource, ns string) string {
	p := "/api/v1"
	if group != "" {
		p = "/apis/" + group + "/v1"
	}
	if ns != "" {
		p += "/namespaces/" + ns
	}
	return p + "/" + resource
}

// generate returns the requests of a window of the given length.
func generate(seed uint64, window time.Duration) []genReq {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	jitter := func(d time.Duration) time.Duration { return d/2 + time.Duration(rng.Int64N(int64(d))) }
	var reqs []genReq
	// kube-controller-manager: informers.
	for _, res := range []struct{ group, name string }{{"", "pods"}, {"", "nodes"}, {"apps", "replicasets"}, {"apps", "deployments"}, {"batch", "jobs"}} {
		reqs = append(reqs, genReq{user: "system:kube-controller-manager", agent: "kube-controller-manager/v1.30.4", verb: "list", resource: res.name, group: res.group,
			uri: path(res.group, res.name, "") + "?limit=500&resourceVersion=0", start: genStart.Add(time.Second), latency: jitter(80 * time.Millisecond)})
		for t := time.Duration(0); t < window; t += 5 * time.Minute {
			reqs = append(reqs, genReq{user: "system:kube-controller-manager", agent: "kube-controller-manager/v1.30.4", verb: "watch", resource: res.name, group: res.group,
				uri: path(res.group, res.name, "") + "?allowWatchBookmarks=true&resourceVersion=12345&watch=true", start: genStart.Add(t), latency: 5 * time.Minute})
		}
	}
	// 40 kubelets: their own pods, from the cache, then watch.
	for n := 0; n < 40; n++ {
		user := fmt.Sprintf("system:node:node-%02d", n)
		reqs = append(reqs, genReq{user: user, agent: "kubelet/v1.30.4", verb: "list", resource: "pods",
			uri: "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-" + fmt.Sprint(n) + "&resourceVersion=0", start: genStart.Add(jitter(time.Minute)), latency: jitter(20 * time.Millisecond)})
		reqs = append(reqs, genReq{user: user, agent: "kubelet/v1.30.4", verb: "watch", resource: "pods",
			uri: "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-" + fmt.Sprint(n) + "&watch=true", start: genStart.Add(time.Minute), latency: 8 * time.Minute})
	}
	// A human with kubectl.
	for t := time.Duration(0); t < window; t += 45 * time.Second {
		reqs = append(reqs, genReq{user: "alice@example.com", agent: "kubectl/v1.30.2 (linux/amd64) kubernetes/abc", verb: "list", resource: "pods", ns: "shop",
			uri: "/api/v1/namespaces/shop/pods?limit=500", start: genStart.Add(t + jitter(10*time.Second)), latency: jitter(60 * time.Millisecond)})
	}
	// The culprit: every 10s, 8 parallel LISTs of pods and nodes by label, no resourceVersion.
	for t := time.Duration(0); t < window; t += 10 * time.Second {
		for i := 0; i < 8; i++ {
			res, group := "pods", ""
			if i%4 == 3 {
				res = "nodes"
			}
			reqs = append(reqs, genReq{user: culprit, agent: "inventory-controller/2.3.0", verb: "list", resource: res, group: group,
				uri: path(group, res, "") + "?labelSelector=team%3Dinventory-" + fmt.Sprint(i), start: genStart.Add(t + time.Duration(rng.Int64N(int64(50*time.Millisecond)))), latency: jitter(4 * time.Second)})
		}
	}
	return reqs
}

// writeLog writes RequestReceived and ResponseComplete events in timestamp
// order, as the API server does.
func writeLog(w io.Writer, reqs []genReq, stages ...string) error {
	if len(stages) == 0 {
		stages = []string{"RequestReceived", "ResponseComplete"}
	}
	type rec struct {
		at   time.Time
		line []byte
	}
	var recs []rec
	for i, r := range reqs {
		for _, st := range stages {
			at := r.start
			if st != "RequestReceived" {
				at = r.start.Add(r.latency)
			}
			recs = append(recs, rec{at, r.line(st, i)})
		}
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].at.Before(recs[j].at) })
	for _, r := range recs {
		if _, err := w.Write(r.line); err != nil {
			return err
		}
	}
	return nil
}
