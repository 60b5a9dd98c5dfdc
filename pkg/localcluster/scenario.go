package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// ScenarioControllers are the kube-controller-manager controllers scenarios
// rely on: rollouts make ReplicaSets and ControllerRevisions, ReplicaSets make
// pods, and pods need their namespace's default ServiceAccount.
// The namespace controller finalizes deleted namespaces (and reports
// discovery failures on them); job and cronjob run the batch scenarios;
// clusterrole-aggregation fills the built-in view/edit/admin roles, as
// every real cluster does, for the tests of users bound to them.
var ScenarioControllers = []string{"deployment", "replicaset", "daemonset", "statefulset", "serviceaccount",
	"namespace", "job", "cronjob", "clusterrole-aggregation"}

// ago matches ${NOW}, ${NOW-90m} and ${NOW+10m}: scenario timestamps
// relative to load time. A look-alike that must stay younger than a grace
// period (5 minutes) for the whole test suite, however slow the machine,
// dates its state a little in the future.
var ago = regexp.MustCompile(`\$\{NOW(?:([-+])([0-9hms]+))?\}`)

// expand replaces ${NOW-3h} with the RFC 3339 time three hours ago.
func expand(b []byte, now time.Time) ([]byte, error) {
	var err error
	out := ago.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := ago.FindSubmatch(m)
		t := now
		if len(sub[2]) > 0 {
			d, perr := time.ParseDuration(string(sub[2]))
			if perr != nil {
				err = perr
				return m
			}
			if string(sub[1]) == "-" {
				d = -d
			}
			t = now.Add(d)
		}
		return []byte(t.UTC().Format(time.RFC3339))
	})
	return out, err
}

// LoadScenarios applies testdata/scenarios/*/NN-*.yaml: each scenario's files
// in name order, each file one step. Objects are server-side applied, their
// status (nodes' conditions, say) written through the status subresource,
// and after each step the workloads it touched are awaited until their
// controller has observed them, so the next step makes a new revision.
func LoadScenarios(ctx context.Context, cfg *rest.Config, dirs []string, log io.Writer) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return fmt.Errorf("discovery: %w", err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	uids := map[string]string{}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		sort.Strings(files)
		if len(files) == 0 {
			return fmt.Errorf("scenario %s has no *.yaml files", dir)
		}
		for _, f := range files {
			objs, err := readUnstructured(f, uids)
			if err != nil {
				return err
			}
			var applied []applied
			for _, o := range objs {
				a, err := apply(ctx, dyn, mapper, o)
				if err != nil {
					return fmt.Errorf("%s: %s %s: %w", f, o.GetKind(), o.GetName(), err)
				}
				uids[a.obj.GetKind()+"/"+a.obj.GetNamespace()+"/"+a.obj.GetName()] = string(a.uid)
				applied = append(applied, a)
			}
			for _, a := range applied {
				if a.obj.GetAnnotations()[DeleteAnnotation] == "true" {
					if err := a.ri.Delete(ctx, a.obj.GetName(), metav1.DeleteOptions{}); err != nil {
						return fmt.Errorf("%s: deleting %s %s: %w", f, a.obj.GetKind(), a.obj.GetName(), err)
					}
				}
			}
			for _, a := range applied {
				if spec := a.obj.GetAnnotations()[RejectPodsAnnotation]; spec != "" && a.obj.GetKind() == "Node" {
					n, err := RejectPods(ctx, kube, a.obj.GetName(), spec)
					if err != nil {
						return fmt.Errorf("%s: %w", f, err)
					}
					fmt.Fprintf(log, "rejected %d pods on node %s as its kubelet would (%s)\n", n, a.obj.GetName(), spec)
				}
			}
			if err := awaitObserved(ctx, applied); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			fmt.Fprintf(log, "applied %s (%d objects)\n", f, len(objs))
		}
	}
	return nil
}

func readUnstructured(path string, uids map[string]string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raw, err = expandUIDs(raw, uids)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	raw, err = expand(raw, time.Now())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

type applied struct {
	ri  dynamic.ResourceInterface
	obj *unstructured.Unstructured
	uid types.UID
}

// DeleteAnnotation "true" deletes the object right after its step is
// applied: how a scenario starts a namespace deletion.
const DeleteAnnotation = "scenario.doctor.test/delete"

// uidRef matches ${UID:Kind/namespace/name}: the UID of an object applied in
// an earlier step, for ownerReferences.
var uidRef = regexp.MustCompile(`\$\{UID:([^}]+)\}`)

func expandUIDs(b []byte, uids map[string]string) ([]byte, error) {
	var err error
	out := uidRef.ReplaceAllFunc(b, func(m []byte) []byte {
		key := string(uidRef.FindSubmatch(m)[1])
		uid, ok := uids[key]
		if !ok {
			err = fmt.Errorf("${UID:%s}: no such object applied in an earlier step", key)
			return m
		}
		return []byte(uid)
	})
	return out, err
}

// fieldManager owns what scenarios write.
const fieldManager = "kubectl-doctor-scenario"

func apply(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, o *unstructured.Unstructured) (applied, error) {
	gvk := o.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return applied{}, err
	}
	var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := o.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		ri = dyn.Resource(m.Resource).Namespace(ns)
	}
	status, hasStatus := o.Object["status"]
	delete(o.Object, "status")
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	out, err := ri.Apply(ctx, o.GetName(), o, opts)
	if err != nil {
		return applied{}, err
	}
	if hasStatus {
		st := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": o.GetAPIVersion(), "kind": o.GetKind(),
			"metadata": map[string]any{"name": o.GetName(), "namespace": o.GetNamespace()},
			"status":   status,
		}}
		if _, err := ri.ApplyStatus(ctx, o.GetName(), st, opts); err != nil {
			return applied{}, fmt.Errorf("writing status: %w", err)
		}
	}
	return applied{ri: ri, obj: o, uid: out.GetUID()}, nil
}

// WaitForAnnotation on a scenario object makes the loader wait, after the
// step, until the object has a status condition TYPE=STATUS (e.g. a
// Deployment's "Progressing=False" once its progress deadline has passed).
const WaitForAnnotation = "scenario.doctor.test/wait-for"

func awaitObserved(ctx context.Context, objs []applied) error {
	for _, a := range objs {
		if cond := a.obj.GetAnnotations()[WaitForAnnotation]; cond != "" {
			if err := awaitCondition(ctx, a, cond); err != nil {
				return err
			}
		}
		switch a.obj.GetKind() {
		case "Deployment", "DaemonSet", "StatefulSet":
		default:
			continue
		}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			cur, err := a.ri.Get(ctx, a.obj.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			observed, _, _ := unstructured.NestedInt64(cur.Object, "status", "observedGeneration")
			return observed >= cur.GetGeneration(), nil
		})
		if err != nil {
			return fmt.Errorf("waiting for the controller to observe %s %s (is kube-controller-manager running?): %w", a.obj.GetKind(), a.obj.GetName(), err)
		}
	}
	return nil
}

func awaitCondition(ctx context.Context, a applied, cond string) error {
	typ, status, ok := strings.Cut(cond, "=")
	if !ok {
		return fmt.Errorf("%s: %s %q is not TYPE=STATUS", a.obj.GetName(), WaitForAnnotation, cond)
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		cur, err := a.ri.Get(ctx, a.obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == typ && m["status"] == status {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s %s to be %s: %w", a.obj.GetKind(), a.obj.GetName(), cond, err)
	}
	return nil
}
