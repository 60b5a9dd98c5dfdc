package checks_test

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/fixture"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// TestTrimmingChangesNoFinding proves that no check reads what the snapshot
// trims away or reads shared parts differently: every fixture set of
// testdata/checks, and all of them together, run through every check
// (profiles included) on the trimmed, shared snapshot a scan keeps and on
// the untrimmed objects give byte-identical JSON reports.
func TestTrimmingChangesNoFinding(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "checks", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixture sets: %v", err)
	}
	all := &fixture.Set{}
	var trimmedObjects, findings int
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		set, err := fixture.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range set.Objects {
			set.Objects[i] = asServed(o)
		}
		all.Objects = append(all.Objects, set.Objects...)
		if all.Metrics == "" {
			all.Metrics = set.Metrics
		}
		for _, o := range set.Objects {
			c := o.DeepCopyObject()
			snapshot.Trim(c)
			if !equality.Semantic.DeepEqual(c, o) {
				trimmedObjects++
			}
		}
		if n := assertSameReports(t, filepath.Base(dir), set); n == 0 {
			t.Errorf("%s: no finding at all with every check", dir)
		} else {
			findings += n
		}
	}
	findings += assertSameReports(t, "all fixtures together", all)
	// The comparison means something only if trimming dropped fields and
	// the checks found things.
	t.Logf("%d fixture objects lose fields to trimming; %d findings compared", trimmedObjects, findings)
	if trimmedObjects < 200 || findings < 100 {
		t.Errorf("only %d fixture objects lose fields to trimming and %d findings: the comparison proves little", trimmedObjects, findings)
	}
}

// asServed returns a copy of a fixture object with what the API server and
// real manifests add and the snapshot trims away (fixtures are minimal, so
// without it there would be little to compare): managedFields, the
// last-applied annotation, and in pod templates container env (values,
// references), commands, arguments, ports, lifecycle hooks, probes with
// headers and exec arguments, and volumes of kinds whose sources are
// dropped. A check that read any of them would see them only untrimmed.
func asServed(o runtime.Object) runtime.Object {
	o = o.DeepCopyObject()
	if m, err := meta.Accessor(o); err == nil {
		m.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{}}}`)}})
		a := m.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[corev1.LastAppliedConfigAnnotation] = `{"apiVersion":"v1","kind":"X","metadata":{"name":"` + m.GetName() + `"}}`
		m.SetAnnotations(a)
	}
	spec, _ := snapshot.PodSpecOf(o)
	if spec == nil {
		return o
	}
	probe := func() *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"),
			HTTPHeaders: []corev1.HTTPHeader{{Name: "Authorization", Value: "Bearer s3cret"}}}}, PeriodSeconds: 10}
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			c := &cs[i]
			c.Env = append(c.Env, corev1.EnvVar{Name: "PASSWORD", Value: "hunter2"},
				corev1.EnvVar{Name: "FROM_CM", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "absent-config"}, Key: "k"}}})
			c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent-secret"}}})
			c.Command = append(c.Command, "/bin/app", "--token=s3cret")
			c.Args = append(c.Args, "--verbose")
			c.Ports = append(c.Ports, corev1.ContainerPort{Name: "extra-9999", ContainerPort: 9999, Protocol: corev1.ProtocolTCP})
			c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}}
			if c.LivenessProbe == nil {
				c.LivenessProbe = probe()
			} else if c.LivenessProbe.HTTPGet != nil {
				c.LivenessProbe.HTTPGet.HTTPHeaders = append(c.LivenessProbe.HTTPGet.HTTPHeaders, corev1.HTTPHeader{Name: "X-Token", Value: "t"})
			}
			if c.ReadinessProbe != nil && c.ReadinessProbe.Exec != nil {
				c.ReadinessProbe.Exec.Command = append(c.ReadinessProbe.Exec.Command, "--secret-arg")
			}
		}
	}
	if pod, ok := o.(*corev1.Pod); ok {
		// The ServiceAccount admission's token volume, its name random per
		// pod, mounted in every container; and what a kubelet reports of
		// each container besides its state.
		token := fmt.Sprintf("kube-api-access-%05x", crc32.ChecksumIEEE([]byte(pod.Namespace+"/"+pod.Name))&0xfffff)
		mount := corev1.VolumeMount{Name: token, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}
		for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
			for i := range cs {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
			}
		}
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: token, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To(int64(3607))}}}}}})
		// A kubelet writes five conditions; a ready fixture pod has its
		// Ready condition at most. The others are added, True, as a kubelet
		// writes them (the snapshot drops them from ready pods).
		if ready, _ := kube.PodReady(pod); ready {
			// A time of their own (not the creation time, which readers
			// fall back to), so that a check reading one would show.
			at := metav1.NewTime(pod.CreationTimestamp.Add(7 * time.Second))
			for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodScheduled} {
				if !slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == t }) {
					pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: at})
				}
			}
		}
		for _, cs := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
			for i := range cs {
				c := &cs[i]
				c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMountStatus{Name: token, MountPath: mount.MountPath, ReadOnly: true})
				c.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
				c.AllocatedResources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
				c.User = &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 1000, GID: 1000, SupplementalGroups: []int64{1000}}}
			}
		}
	}
	spec.Volumes = append(spec.Volumes,
		corev1.Volume{Name: "served-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent-config"}}}},
		corev1.Volume{Name: "served-secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent-secret"}}},
		corev1.Volume{Name: "served-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To(int64(3607))}}}}}})
	return o
}

// assertSameReports runs every check over set trimmed and untrimmed and
// fails unless the JSON reports are identical; it returns the findings.
func assertSameReports(t *testing.T, name string, set *fixture.Set) int {
	t.Helper()
	trimmed, err := set.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	copies := make([]runtime.Object, len(set.Objects))
	for i, o := range set.Objects {
		copies[i] = o.DeepCopyObject()
	}
	untrimmed, err := snapshot.Untrimmed(copies...)
	if err != nil {
		t.Fatal(err)
	}
	if set.Metrics != "" {
		if err := untrimmed.SetMetrics(bytes.NewReader([]byte(set.Metrics))); err != nil {
			t.Fatal(err)
		}
	}
	var out [2][]byte
	n := 0
	for i, s := range []*snapshot.Snapshot{trimmed, untrimmed} {
		s.ServerVersion = FixtureServerVersion
		r := doctor.Run(context.Background(), s, withProfiles(), fixture.Now())
		r.Duration = 0
		var b bytes.Buffer
		if err := report.JSON(&b, r); err != nil {
			t.Fatal(err)
		}
		out[i] = b.Bytes()
		n = len(r.Findings)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Errorf("%s: the trimmed snapshot's report differs from the untrimmed one's:\n%s", name, firstDiff(out[0], out[1], "trimmed", "untrimmed"))
	}
	return n
}

// firstDiff shows the lines around the first difference of a and b,
// labelled na and nb.
func firstDiff(a, b []byte, na, nb string) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < min(len(la), len(lb)); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			lo := max(0, i-3)
			return na + ":\n" + string(bytes.Join(la[lo:min(len(la), i+4)], []byte("\n"))) +
				"\n" + nb + ":\n" + string(bytes.Join(lb[lo:min(len(lb), i+4)], []byte("\n")))
		}
	}
	return "lengths differ"
}
