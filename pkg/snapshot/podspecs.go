package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The pods of one template carry the same spec but for their node (and,
// since the ServiceAccount admission names each pod's token volume
// kube-api-access-<5 random characters>, that name). Decoding, trimming and
// sharing 30,000 copies of 300 specs was a third of a scan's CPU and most
// of its garbage. So the decoder reads a pod's spec once per distinct
// spec: it looks the spec's bytes up (node name left out, token volume
// suffix masked) among the specs the Trimmer has already trimmed, and a pod
// that finds its spec gets a copy of it with its own node name; only the
// first pod of each template decodes its spec. The result is the one
// trimming the pod's own spec gives: the masked suffix is all that
// differs, and trimming renames the token volume (renameTokenVolume); a
// spec is cached only when every masked occurrence was that volume or a
// mount of it (cacheSpec).

const (
	podSpecNumber     = 2  // Pod.spec
	podStatusNumber   = 3  // Pod.status
	podNodeNameNumber = 10 // PodSpec.nodeName
)

// What sharePodStatus drops of a pod's status is not decoded at all: the
// PodStatus field podIPs (12) and, of each container status (in the fields
// initContainerStatuses 10, containerStatuses 8, ephemeralContainerStatuses
// 13), the kubelet's containerID (8), allocatedResources (10), resources
// (11), volumeMounts (12), user (13), allocatedResourcesStatus (14) and
// stopSignal (15): per pod, unshareable, and the largest part of what
// decoding a running pod's status allocated.
const (
	statusConditions = 2
	statusPodIPs     = 12
)

// conditionOf reads a PodCondition's type (1) and status (2), in place.
func conditionOf(b []byte) (typ, status []byte) {
	_ = eachField(b, func(num int, v []byte) error {
		switch num {
		case 1:
			typ = v
		case 2:
			status = v
		}
		return nil
	})
	return typ, status
}

// impliedTrue says a condition is one impliedByReady, True.
func impliedTrue(typ, status []byte) bool {
	if string(status) != string(corev1.ConditionTrue) {
		return false
	}
	for t := range impliedByReady { // four types: no key made from the bytes
		if string(typ) == string(t) {
			return true
		}
	}
	return false
}

var containerStatusLists = map[int]bool{8: true, 10: true, 13: true}

func containerStatusDropped(num int) bool { return num == 8 || num >= 10 && num <= 15 }

// appendPodStatus appends the Pod field status, holding st without what
// sharePodStatus drops.
func appendPodStatus(out, st []byte) ([]byte, error) {
	// readyConditions, on the bytes: with a True Ready condition, the True
	// conditions it implies are not decoded.
	ready := false
	_ = eachField(st, func(num int, v []byte) error {
		if num == statusConditions {
			if typ, status := conditionOf(v); string(typ) == string(corev1.PodReady) && string(status) == string(corev1.ConditionTrue) {
				ready = true
			}
		}
		return nil
	})
	return appendMessage(out, podStatusNumber, func(out []byte) ([]byte, error) {
		err := eachFieldRaw(st, func(num int, field, v []byte) error {
			switch {
			case num == statusPodIPs:
				return nil
			case num == statusConditions && ready:
				if impliedTrue(conditionOf(v)) {
					return nil
				}
			case containerStatusLists[num]:
				var err error
				out, err = appendMessage(out, num, func(out []byte) ([]byte, error) {
					err := eachFieldRaw(v, func(num int, field, _ []byte) error {
						if !containerStatusDropped(num) {
							out = append(out, field...)
						}
						return nil
					})
					return out, err
				})
				return err
			}
			out = append(out, field...)
			return nil
		})
		return out, err
	})
}

// appendMessage appends a length-delimited field num whose contents body
// appends.
func appendMessage(out []byte, num int, body func([]byte) ([]byte, error)) ([]byte, error) {
	out = binary.AppendUvarint(out, uint64(num)<<3|2)
	lenAt := len(out)
	out = append(out, make([]byte, binary.MaxVarintLen64)...) // room for the length
	start := len(out)
	out, err := body(out)
	if err != nil {
		return out, err
	}
	l := binary.PutUvarint(out[lenAt:], uint64(len(out)-start))
	return append(out[:lenAt+l], out[start:]...), nil
}

// tokenPattern is the protobuf encoding of a token volume's name as a
// string field's contents: its length (21) and its prefix; the 5 bytes
// after it are the random suffix.
var tokenPattern = append([]byte{byte(len(tokenVolume) + 6)}, tokenVolume+"-"...)

type specKey [sha256.Size]byte

// podSpecMark is what the decoder tells Trim about a pod: its spec came from
// the cache (hit), or it is the first of its key (tokens: the masked
// occurrences, to be checked against the trimmed spec).
type podSpecMark struct {
	hit    bool
	key    specKey
	tokens int
}

// decodePod unmarshals a pod's bytes (raw, without managedFields), taking
// its spec from the cache when an equal one was trimmed before. scratch is
// reusable memory; the grown scratch is returned.
func (tr *Trimmer) decodePod(pod *corev1.Pod, raw, scratch []byte) ([]byte, error) {
	rest := scratch[:0]
	var spec []byte
	specs := 0
	err := eachFieldRaw(raw, func(num int, field, v []byte) error {
		switch num {
		case podSpecNumber:
			spec, specs = v, specs+1
			return nil
		case podStatusNumber:
			var err error
			rest, err = appendPodStatus(rest, v)
			return err
		}
		rest = append(rest, field...)
		return nil
	})
	if err != nil || specs != 1 {
		return rest, pod.Unmarshal(raw)
	}
	var nodeName []byte
	keyBytes := rest[len(rest):]
	err = eachFieldRaw(spec, func(num int, field, v []byte) error {
		if num == podNodeNameNumber {
			nodeName = v
			return nil
		}
		keyBytes = append(keyBytes, field...)
		return nil
	})
	if err != nil {
		return rest, pod.Unmarshal(raw)
	}
	tokens := 0
	for i := 0; ; {
		j := bytes.Index(keyBytes[i:], tokenPattern)
		if j < 0 || i+j+len(tokenPattern)+5 > len(keyBytes) {
			break
		}
		at := i + j + len(tokenPattern)
		copy(keyBytes[at:at+5], "*****")
		tokens++
		i = at + 5
	}
	key := specKey(sha256.Sum256(keyBytes))
	tr.mu.Lock()
	cached := tr.specs[key]
	tr.mu.Unlock()
	if err := pod.Unmarshal(rest); err != nil {
		return rest, err
	}
	mark := podSpecMark{key: key, tokens: tokens}
	if cached != nil {
		pod.Spec = *cached
		tr.mu.Lock()
		pod.Spec.NodeName = tr.str(string(nodeName))
		tr.mu.Unlock()
		mark.hit = true
	} else if err := pod.Spec.Unmarshal(spec); err != nil {
		return rest, err
	}
	tr.mu.Lock()
	tr.marks[pod] = mark
	tr.mu.Unlock()
	return rest, nil
}

// takeMark returns and forgets what the decoder noted about pod.
func (tr *Trimmer) takeMark(pod *corev1.Pod) (podSpecMark, bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	m, ok := tr.marks[pod]
	if ok {
		delete(tr.marks, pod)
	}
	return m, ok
}

// cacheSpec keeps the trimmed, shared spec of the first pod of a key, when
// the masked occurrences were exactly the names trimming renamed (renamed:
// the token volume and its mounts, each of the generated shape), so that
// every pod of the key trims to this spec. Every renamed name is masked
// (it has the pattern), so equal counts mean nothing else was: a PVC or a
// ServiceAccount named like a token volume is not, and such a spec is not
// cached. What is kept is a pointer to the pod's own spec, which nothing
// writes after trimming: a spec seen once (a DaemonSet's pod, whose node
// affinity names its node; a StatefulSet's, with its hostname) costs the
// map entry, not a copy.
func (tr *Trimmer) cacheSpec(m podSpecMark, spec *corev1.PodSpec, renamed int) {
	if renamed != m.tokens {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if _, ok := tr.specs[m.key]; !ok {
		tr.specs[m.key] = spec
	}
}

// forget drops what the decoder noted of a pod that will not be trimmed
// (a deleted pod, a bookmark's).
func (tr *Trimmer) forget(obj runtime.Object) {
	if p, ok := obj.(*corev1.Pod); ok && tr != nil {
		tr.takeMark(p)
	}
}
