package kube

import (
	"regexp"
	"sort"
	"strings"
)

// EventClass is what a Warning event says went wrong, decided from its
// reason and the decisive words of its message (never from the reason alone:
// FailedMount covers a missing ConfigMap and a volume attached elsewhere).
type EventClass string

const (
	EventMultiAttach    EventClass = "volume-multi-attach" // RWO volume attached to another node
	EventVolumeMissing  EventClass = "volume-source-missing"
	EventVolumeAttach   EventClass = "volume-attach"
	EventVolumeMount    EventClass = "volume-mount"
	EventSandbox        EventClass = "sandbox"
	EventLivenessKill   EventClass = "liveness-probe"
	EventStartupKill    EventClass = "startup-probe"
	EventReadiness      EventClass = "readiness-probe"
	EventQuota          EventClass = "resource-quota"
	EventLimitRange     EventClass = "limit-range"
	EventPodSecurity    EventClass = "pod-security"
	EventWebhookDenied  EventClass = "webhook-denied"
	EventWebhookFailed  EventClass = "webhook-failed"
	EventServiceAccount EventClass = "service-account"
	EventAdmission      EventClass = "admission" // refused by the API server, shape not known: quoted
	EventImageNotFound  EventClass = "image-not-found"
	EventImageAuth      EventClass = "image-auth"
	EventImageAmbiguous EventClass = "image-not-found-or-denied"
	EventImageRateLimit EventClass = "image-rate-limit"
	EventImageNetwork   EventClass = "image-network"
	EventEvicted        EventClass = "evicted"
	EventNodeRejected   EventClass = "node-rejected" // kubelet admission: OutOfcpu, NodeAffinity...
	EventOther          EventClass = "other"
)

// EventCause is a classified Warning event with the facts its message holds.
type EventCause struct {
	Class EventClass
	// Subject is what the message is about: the volume, the quota, the
	// webhook, the probe kind, the resource an eviction names.
	Subject string
	// Holders are the pods a Multi-Attach error names (same namespace).
	Holders []string
	// Volume is the volume a missing source was to be mounted as
	// (EventVolumeMissing); "" when the message names none.
	Volume string
	// Quota is what an exhausted ResourceQuota reports (EventQuota); nil
	// when the quota instead demands that every container declare
	// MustDeclare.
	Quota       *QuotaUse
	MustDeclare string
	// Limits are the LimitRange bounds the pod breaks (EventLimitRange),
	// in the order the API server lists them.
	Limits []LimitBreach
	// Violations is what Pod Security found (EventPodSecurity; Subject is
	// the level enforced).
	Violations string
	// Eviction is the eviction the message describes (EventEvicted); nil
	// when its shape is not known.
	Eviction *Eviction
	// Sandbox is why the pod sandbox failed (EventSandbox).
	Sandbox SandboxCause
}

// QuotaUse is an exhausted ResourceQuota's report, as the API server
// writes it: "requests.cpu=500m".
type QuotaUse struct {
	Requested, Used, Limited string
}

// LimitBreach is a LimitRange bound a pod breaks: Bound (maximum or
// minimum) Resource usage per Per is Allowed, but its Field (limit or
// request) is Actual; or, with Ratio, the limit/request ratio of Resource
// per Per may be Allowed and is Actual. Missing says the Field is not set
// at all (the LimitRange has no default for it to fill in; with Ratio, the
// request or limit is unset or zero), and Actual is then "".
type LimitBreach struct {
	Ratio                  bool
	Missing                bool
	Bound, Resource, Per   string
	Allowed, Field, Actual string
}

var (
	multiAttach   = regexp.MustCompile(`Multi-Attach error for volume "([^"]+)"(?: Volume is already used by pod\(s\) ([^.]*?)(?: and \d+ pod\(s\) in different namespaces)?$| (Volume is already .*))`)
	forVolume     = regexp.MustCompile(`for volume "([^"]+)"`)
	unmountedVols = regexp.MustCompile(`unmounted volumes=\[([^\]]*)\]`)
	sourceMissing = regexp.MustCompile(`(?i)(configmap|secret|persistentvolumeclaim)s? "([^"]+)" not found`)
	quotaExceeded = regexp.MustCompile(`exceeded quota: ([^,]+), requested: ([^,]+(?:,[^,:]+)*?), used: ([^,]+(?:,[^,:]+)*?), limited: (.+)$`)
	quotaMustSpec = regexp.MustCompile(`failed quota: ([^:]+): must specify (.+)$`)
	// The LimitRanger admission plugin's messages, one per bound broken
	// (several are listed in brackets, comma-separated).
	limitRangeMsg   = regexp.MustCompile(`(?i)(maximum|minimum) (\S+) usage per (Container|Pod|PersistentVolumeClaim) is ([^\s,]+),?\s+but (limit|request) is ([^\s,\]]+)`)
	limitUnset      = regexp.MustCompile(`(?i)(maximum|minimum) (\S+) usage per (Container|Pod|PersistentVolumeClaim) is ([^\s,]+?)\.?\s+No (limit|request) is specified`)
	limitRatio      = regexp.MustCompile(`(\S+) max limit to request ratio per (Container|Pod) is ([^\s,]+), but provided ratio is ([^\s,\]]+)`)
	limitRatioUnset = regexp.MustCompile(`(\S+) max limit to request ratio per (Container|Pod) is ([^\s,]+), but no (request|limit) is specified or (?:request|limit) is 0`)
	podSecurity     = regexp.MustCompile(`violates PodSecurity "([^"]+)": (.+)$`)
	webhookDenied   = regexp.MustCompile(`admission webhook "([^"]+)" denied the request:? ?(.*)$`)
	serviceAccount  = regexp.MustCompile(`serviceaccount "([^"]+)" not found`)
	probeFailed     = regexp.MustCompile(`^(Liveness|Readiness|Startup) probe (?:failed|errored)`)
	probeKilled     = regexp.MustCompile(`^Container (\S+) failed (liveness|startup) probe, will be restarted`)
	forbiddenPrefix = regexp.MustCompile(`^(?:Error creating: )?(?:pods|jobs) "[^"]*" is forbidden: `)
)

// ClassifyEvent reads one Warning event.
func ClassifyEvent(reason, message string) EventCause {
	m := strings.TrimSpace(EventMessage(message))
	switch reason {
	case "FailedAttachVolume", "FailedMount", "FailedMapVolume":
		if g := multiAttach.FindStringSubmatch(m); g != nil {
			c := EventCause{Class: EventMultiAttach, Subject: g[1]}
			for _, p := range strings.Split(g[2], ",") {
				if p = strings.TrimSpace(p); p != "" {
					c.Holders = append(c.Holders, p)
				}
			}
			return c
		}
		if g := sourceMissing.FindStringSubmatch(m); g != nil {
			kind := strings.ToLower(g[1])
			c := EventCause{Class: EventVolumeMissing, Subject: kind + " " + g[2]}
			if v := forVolume.FindStringSubmatch(m); v != nil {
				c.Volume = v[1]
			}
			return c
		}
		c := EventCause{Class: EventVolumeMount}
		if reason == "FailedAttachVolume" {
			c.Class = EventVolumeAttach
		}
		if v := forVolume.FindStringSubmatch(m); v != nil {
			c.Subject = v[1]
		} else if v := unmountedVols.FindStringSubmatch(m); v != nil {
			c.Subject = strings.TrimSpace(v[1])
		}
		return c
	case "FailedCreatePodSandBox", "FailedKillPodSandBox", "FailedPodSandBoxStatus":
		return EventCause{Class: EventSandbox, Sandbox: ClassifySandbox(m)}
	case "Unhealthy":
		if g := probeFailed.FindStringSubmatch(m); g != nil {
			switch g[1] {
			case "Liveness":
				return EventCause{Class: EventLivenessKill, Subject: "liveness"}
			case "Startup":
				return EventCause{Class: EventStartupKill, Subject: "startup"}
			}
			return EventCause{Class: EventReadiness, Subject: "readiness"}
		}
	case "Killing":
		if g := probeKilled.FindStringSubmatch(m); g != nil {
			if g[2] == "startup" {
				return EventCause{Class: EventStartupKill, Subject: g[1]}
			}
			return EventCause{Class: EventLivenessKill, Subject: g[1]}
		}
	case "Evicted", "Preempting":
		// The kubelet's eviction manager and its critical-pod preemption
		// (pkg/kubelet/eviction, pkg/kubelet/preemption): the resource,
		// or the pressure condition of a refusal at admission.
		c := EventCause{Class: EventEvicted}
		if e, ok := ParseEviction(m); ok {
			c.Subject, c.Eviction = e.Resource, &e
		}
		return c
	case "Failed", "ErrImagePull", "ImagePullBackOff", "BackOff":
		if strings.Contains(m, "pull") || strings.Contains(m, "image") {
			if c, ok := classifyPullMessage(m); ok {
				return c
			}
		}
	case "OutOfcpu", "OutOfmemory", "OutOfpods", "OutOfephemeral-storage", "NodeAffinity", "NodeSelectorMismatching", "UnexpectedAdmissionError", "PodOSNotSupported":
		return EventCause{Class: EventNodeRejected, Subject: reason}
	case "FailedCreate", "FailedCreatePodReason":
		return ClassifyAdmission(m)
	}
	if strings.HasPrefix(reason, "OutOf") {
		return EventCause{Class: EventNodeRejected, Subject: reason}
	}
	return EventCause{Class: EventOther}
}

// ClassifyAdmission reads an error the API server returned to a controller
// (a FailedCreate event, a ReplicaFailure condition): the admission
// plugin's or webhook's refusal, parsed where its shape is known.
func ClassifyAdmission(msg string) EventCause {
	m := strings.TrimSpace(EventMessage(msg))
	body := forbiddenPrefix.ReplaceAllString(m, "")
	if g := quotaExceeded.FindStringSubmatch(body); g != nil {
		return EventCause{Class: EventQuota, Subject: g[1], Quota: &QuotaUse{Requested: g[2], Used: g[3], Limited: strings.TrimSpace(g[4])}}
	}
	if g := quotaMustSpec.FindStringSubmatch(body); g != nil {
		return EventCause{Class: EventQuota, Subject: g[1], MustDeclare: strings.TrimSpace(g[2])}
	}
	if ls := limitBreaches(body); len(ls) > 0 {
		return EventCause{Class: EventLimitRange, Subject: ls[0].Resource, Limits: ls}
	}
	if g := podSecurity.FindStringSubmatch(body); g != nil {
		return EventCause{Class: EventPodSecurity, Subject: g[1], Violations: g[2]}
	}
	if g := webhookDenied.FindStringSubmatch(body); g != nil {
		return EventCause{Class: EventWebhookDenied, Subject: g[1]}
	}
	if name, _, ok := FailedWebhook(body); ok {
		return EventCause{Class: EventWebhookFailed, Subject: name}
	}
	if g := serviceAccount.FindStringSubmatch(body); g != nil {
		return EventCause{Class: EventServiceAccount, Subject: g[1]}
	}
	if strings.Contains(m, "is forbidden") || strings.Contains(m, "is invalid") || strings.Contains(m, "admission") {
		return EventCause{Class: EventAdmission}
	}
	return EventCause{Class: EventOther}
}

// limitBreaches reads every LimitRange bound an admission error lists, in
// its order.
func limitBreaches(body string) []LimitBreach {
	type at struct {
		pos int
		l   LimitBreach
	}
	var found []at
	add := func(re *regexp.Regexp, mk func(g []string) LimitBreach) {
		for _, ix := range re.FindAllStringSubmatchIndex(body, -1) {
			g := make([]string, len(ix)/2)
			for i := range g {
				if ix[2*i] >= 0 {
					g[i] = body[ix[2*i]:ix[2*i+1]]
				}
			}
			found = append(found, at{ix[0], mk(g)})
		}
	}
	lower := strings.ToLower
	add(limitRangeMsg, func(g []string) LimitBreach {
		return LimitBreach{Bound: lower(g[1]), Resource: g[2], Per: g[3], Allowed: g[4], Field: lower(g[5]), Actual: g[6]}
	})
	add(limitUnset, func(g []string) LimitBreach {
		return LimitBreach{Missing: true, Bound: lower(g[1]), Resource: g[2], Per: g[3], Allowed: g[4], Field: lower(g[5])}
	})
	add(limitRatio, func(g []string) LimitBreach {
		return LimitBreach{Ratio: true, Resource: g[1], Per: g[2], Allowed: g[3], Actual: g[4]}
	})
	add(limitRatioUnset, func(g []string) LimitBreach {
		return LimitBreach{Ratio: true, Missing: true, Resource: g[1], Per: g[2], Allowed: g[3], Field: g[4]}
	})
	sort.SliceStable(found, func(i, j int) bool { return found[i].pos < found[j].pos })
	out := make([]LimitBreach, len(found))
	for i, f := range found {
		out[i] = f.l
	}
	return out
}

// SandboxCause is why the runtime could not create or keep a pod sandbox,
// read from the kubelet's FailedCreatePodSandBox (and kill/status) message.
type SandboxCause int

const (
	// SandboxIPExhausted: the CNI's IP pool has no address left.
	SandboxIPExhausted SandboxCause = iota
	// SandboxCNINotReady: the node's CNI plugin is missing or uninitialised.
	SandboxCNINotReady
	// SandboxRuntimeTimeout: the runtime or the CNI call timed out.
	SandboxRuntimeTimeout
	// SandboxOther: any other runtime error.
	SandboxOther
)

// sandboxMarkers are lower-case phrases of the runtimes' and CNI plugins'
// messages, in the order they are tried.
var sandboxMarkers = []struct {
	cause   SandboxCause
	markers []string
}{
	{SandboxIPExhausted, []string{"failed to assign an ip", "no available ip", "failed to allocate for range",
		"no ip addresses available", "range is full"}},
	{SandboxCNINotReady, []string{"cni plugin not initialized", "failed to find plugin", "network plugin is not ready",
		"cni config uninitialized", "error received from addnetwork grpc call"}},
	{SandboxRuntimeTimeout, []string{"context deadline exceeded"}},
}

// ClassifySandbox reads a sandbox failure's message.
func ClassifySandbox(message string) SandboxCause {
	l := strings.ToLower(message)
	for _, c := range sandboxMarkers {
		if containsAny(l, c.markers) {
			return c.cause
		}
	}
	return SandboxOther
}

// classifyPullMessage decides an image pull failure from the decisive
// words of the message. A credentials failure is never called a missing
// tag; Docker Hub's "repository does not exist or may require 'docker
// login'" cannot tell the two apart and is called both.
func classifyPullMessage(m string) (EventCause, bool) {
	switch ClassifyPull("", m) {
	case PullNotFound:
		return EventCause{Class: EventImageNotFound}, true
	case PullAccessDenied:
		return EventCause{Class: EventImageAuth}, true
	case PullAmbiguous:
		return EventCause{Class: EventImageAmbiguous}, true
	case PullRateLimited:
		return EventCause{Class: EventImageRateLimit}, true
	case PullUnreachable, PullTLS:
		return EventCause{Class: EventImageNetwork}, true
	}
	return EventCause{}, false
}
