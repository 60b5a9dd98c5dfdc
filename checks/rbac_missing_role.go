package checks

import (
	"fmt"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/kube"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// RBACMissingRole reports RoleBindings and ClusterRoleBindings whose roleRef
// names a Role or ClusterRole that does not exist: they grant nothing, and
// the workloads running as their ServiceAccounts get 403s.
var RBACMissingRole = &doctor.Check{
	Name:     "rbac-missing-role",
	Severity: doctor.Warning,
	Origin:   "peer coverage map",
	Reads: []snapshot.Resource{snapshot.RoleBindings, snapshot.ClusterRoleBindings, snapshot.Roles,
		snapshot.ClusterRoles},
	Optional: append([]snapshot.Resource{snapshot.Pods}, kube.WorkloadReads...),
	Run:      runRBACMissingRole,
	Doc: `RoleBindings and ClusterRoleBindings that bind a Role or ClusterRole that does not exist

## Why it matters
A binding's ` + "`roleRef`" + ` is not validated against existing roles, and it cannot be
changed after creation. A Role deleted or renamed by an upgraded chart, a
ClusterRole that an operator was supposed to install, a typo: the binding is
accepted and grants nothing. The operator or controller running as its
ServiceAccount then fails every call with ` + "`403 Forbidden`" + ` — often a crash loop
or a reconcile loop that silently does nothing, far from the cause.

## How it is detected
Roles, ClusterRoles and both kinds of bindings are listed (names and rules;
never a Secret). A RoleBinding may bind a Role of its own namespace or a
ClusterRole; a ClusterRoleBinding only a ClusterRole. A binding whose role is
absent is reported, naming its subjects and, when the workloads are listed,
the workloads that run as the ServiceAccounts it binds: a warning, as what
they lose depends on the role. Bindings of the ` + "`system:`" + ` prefix are
reported too: the control plane recreates its own roles, so a missing one
there is a broken upgrade.

## How to fix
Recreate the role the binding names (re-install the chart or operator that
owns it), or delete the binding and bind an existing role:
` + "`kubectl create rolebinding NAME --role=ROLE --serviceaccount=NS:SA`" + ` (a
binding's roleRef is immutable, so it is replaced, not edited).

## References
- https://kubernetes.io/docs/reference/access-authn-authz/rbac/#rolebinding-and-clusterrolebinding
- https://kubernetes.io/docs/reference/access-authn-authz/rbac/#kubectl-auth-reconcile`,
}

func runRBACMissingRole(p *doctor.Pass) error {
	roles := map[string]bool{}
	for _, r := range p.Snapshot.Roles() {
		roles[r.Namespace+"/"+r.Name] = true
	}
	croles := map[string]bool{}
	for _, r := range p.Snapshot.ClusterRoles() {
		croles[r.Name] = true
	}
	users := serviceAccountUsers(p.Snapshot)
	report := func(ref doctor.ObjectRef, bindingKind, ns string, rr rbacv1.RoleRef, subjects []rbacv1.Subject) {
		where := "the cluster"
		if rr.Kind == "Role" {
			where = "namespace " + ns
		}
		subj, workloads := describeSubjects(subjects, ns, users)
		msg := fmt.Sprintf("%s %s binds %s %s, which does not exist in %s: it grants %s nothing", strings.ToLower(bindingKind), ref.Name, strings.ToLower(rr.Kind), rr.Name, where, subj)
		if len(workloads) > 0 {
			verb := " run as its service accounts and are"
			if len(workloads) == 1 {
				verb = " runs as its service account and is"
			}
			msg += "; " + strings.Join(doctor.Examples(workloads), ", ") + more(len(workloads)) + verb + " refused what the role should allow"
		}
		nsFlag := ""
		if ns != "" {
			nsFlag = " -n " + ns
		}
		rem := []doctor.Remediation{
			{Text: "recreate the " + rr.Kind + " it names (reinstall the chart or operator that owns it)", Command: fmt.Sprintf("kubectl get %s%s", strings.ToLower(rr.Kind)+"s", nsFlag)},
			{Text: "or replace the binding (its roleRef cannot be changed) with one naming a role that exists", Command: fmt.Sprintf("kubectl get %s %s%s -o yaml", strings.ToLower(bindingKind), ref.Name, nsFlag)},
		}
		p.Report(doctor.Finding{Object: ref, Message: msg, Remediation: rem})
	}
	rbs := p.Snapshot.RoleBindings()
	for i := range rbs {
		rb := &rbs[i]
		switch rb.RoleRef.Kind {
		case "Role":
			if roles[rb.Namespace+"/"+rb.RoleRef.Name] {
				continue
			}
		case "ClusterRole":
			if croles[rb.RoleRef.Name] {
				continue
			}
		default:
			continue
		}
		report(kube.Ref("rbac.authorization.k8s.io/v1", "RoleBinding", rb), "RoleBinding", rb.Namespace, rb.RoleRef, rb.Subjects)
	}
	crbs := p.Snapshot.ClusterRoleBindings()
	for i := range crbs {
		crb := &crbs[i]
		if crb.RoleRef.Kind != "ClusterRole" || croles[crb.RoleRef.Name] {
			continue
		}
		report(kube.Ref("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", crb), "ClusterRoleBinding", "", crb.RoleRef, crb.Subjects)
	}
	return nil
}

// serviceAccountUsers maps "ns/sa" to the workloads users manage that run
// as it ("deployment/operator"); empty when workloads were not listed.
func serviceAccountUsers(s *snapshot.Snapshot) map[string][]string {
	out := map[string][]string{}
	for _, r := range kube.WorkloadReads {
		if s.Err(r) != nil {
			return out
		}
	}
	for w := range kube.TopWorkloads(s) {
		if w.Spec == nil {
			continue
		}
		sa := w.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		k := w.Ref.Namespace + "/" + sa
		out[k] = append(out[k], w.Ref.Namespace+"/"+w.KindName())
	}
	return out
}

// describeSubjects is "serviceaccount ns/op and group dev" and the
// workloads that run as the bound ServiceAccounts.
func describeSubjects(subjects []rbacv1.Subject, bindingNS string, users map[string][]string) (string, []string) {
	var names, workloads []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = bindingNS
			}
			names = append(names, "serviceaccount "+ns+"/"+s.Name)
			workloads = append(workloads, users[ns+"/"+s.Name]...)
		default:
			names = append(names, strings.ToLower(s.Kind)+" "+s.Name)
		}
	}
	sort.Strings(workloads)
	if len(names) == 0 {
		return "no subject", nil
	}
	return strings.Join(doctor.Examples(names), ", ") + more(len(names)), workloads
}
