package snapshot

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
)

// Access is what the API server said, before the scan, about the reads a
// user may make: a person bound to `view` learns up front which checks
// will be skipped and why, and the loader does not send reads bound to be
// refused.
type Access struct {
	// Denied maps a read (as Plan returns it) to the verb the user lacks:
	// "list", or "get" for a path such as /metrics.
	Denied map[Resource]string
	// NoWatch are reads the user may list but not watch: the loader LISTs
	// them at once instead of being refused a watch-list first.
	NoWatch map[Resource]bool
	// Requests is how many review requests this took.
	Requests int
}

// Denies says whether the review denied r, and the verb the user lacks.
func (a *Access) Denies(r Resource) (verb string, denied bool) {
	if a == nil {
		return "", false
	}
	v, ok := a.Denied[r]
	return v, ok
}

func (a *Access) noWatch(r Resource) bool { return a != nil && a.NoWatch[r] }

// ReviewAccess asks the API server what the user of cfg may read of plan,
// in namespace ns ("" for a cluster-wide scan): one SelfSubjectRulesReview,
// matched locally with the RBAC rule comparator; when the server says its
// rules are incomplete (an authorizer other than RBAC, such as a webhook),
// each read the rules do not grant is confirmed with a
// SelfSubjectAccessReview, so that nothing is denied on a guess.
//
// A rules review of a namespace also lists rules that RoleBindings grant
// only there, so a cluster-wide read it allows may still be refused; the
// loader then classifies the 403 as it always did. What it denies (no
// ClusterRoleBinding grants it) is certain.
func ReviewAccess(ctx context.Context, cfg *rest.Config, plan []Resource, ns string) (*Access, error) {
	c, err := GroupClient(cfg, authorizationv1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	reviewNS := ns
	if reviewNS == "" {
		reviewNS = metav1.NamespaceDefault
	}
	ctx = WithRead(ctx, "selfsubjectrulesreviews")
	// A review stores nothing: retrying one that failed is safe.
	var rr *authorizationv1.SelfSubjectRulesReview
	err = Retry(ctx, DefaultRetry, nil, func() error {
		rr = &authorizationv1.SelfSubjectRulesReview{}
		return c.Post().Resource("selfsubjectrulesreviews").
			Body(&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: reviewNS}}).Do(ctx).Into(rr)
	})
	if err != nil {
		return nil, fmt.Errorf("reviewing access: %w", err)
	}
	a := &Access{Denied: map[Resource]string{}, NoWatch: map[Resource]bool{}, Requests: 1}
	rules := policyRules(rr.Status)
	for _, r := range Plan(plan) {
		verb := r.Verb()
		if !Allows(rules, verb, r) {
			if rr.Status.Incomplete {
				a.Requests++
				ok, err := accessReview(WithRead(ctx, "selfsubjectaccessreviews of "+r.String()), c, verb, r, ns)
				if err != nil || ok {
					continue // unsure: let the read find out
				}
			}
			a.Denied[r] = verb
			continue
		}
		if r.Path == "" && r.Kind != "Event" && !Allows(rules, "watch", r) && !rr.Status.Incomplete {
			a.NoWatch[r] = true
		}
	}
	return a, nil
}

// policyRules turns a rules review into RBAC rules for the comparator.
func policyRules(st authorizationv1.SubjectRulesReviewStatus) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range st.ResourceRules {
		out = append(out, rbacv1.PolicyRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	for _, r := range st.NonResourceRules {
		out = append(out, rbacv1.PolicyRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
	}
	return out
}

// Allows says whether rules grant verb on r (a LIST of every object: a
// rule limited to resourceNames does not; for a non-resource read such as
// /metrics, verb on its path), by the API server's own rule matching.
func Allows(rules []rbacv1.PolicyRule, verb string, r Resource) bool {
	want := rbacv1.PolicyRule{Verbs: []string{verb}}
	if r.Path != "" {
		want.NonResourceURLs = []string{r.Path}
	} else {
		want.APIGroups = []string{r.Group}
		want.Resources = []string{r.Resource}
	}
	ok, _ := rbacvalidation.Covers(rules, []rbacv1.PolicyRule{want})
	return ok
}

func accessReview(ctx context.Context, c *rest.RESTClient, verb string, r Resource, ns string) (bool, error) {
	spec := authorizationv1.SelfSubjectAccessReviewSpec{}
	if r.Path != "" {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: r.Path, Verb: verb}
	} else {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: verb, Group: r.Group, Version: r.Version, Resource: r.Resource}
		if r.Namespaced {
			spec.ResourceAttributes.Namespace = ns
		}
	}
	res := &authorizationv1.SelfSubjectAccessReview{}
	if err := c.Post().Resource("selfsubjectaccessreviews").Body(&authorizationv1.SelfSubjectAccessReview{Spec: spec}).Do(ctx).Into(res); err != nil {
		return false, err
	}
	return res.Status.Allowed, nil
}

// GroupClient is a REST client for one API group version, decoding with
// Scheme. The few requests a scan makes besides its reads (the access
// review, the namespace of -n) go through it rather than client-go's
// generated clientset, whose typed clients for every API group would be
// linked in (and paged in) for two calls.
func GroupClient(cfg *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = Codecs().WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientFor(c)
}
