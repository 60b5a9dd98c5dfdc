package checks

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// Certificates reports cert-manager Certificates that are expired, never
// issued, or whose renewal fails, in cert-manager's own words, with the
// dates computed from their status (expiry, renewal due, next retry), and
// the issuers that cannot sign as the one cause of every certificate they
// hold back. On a cluster without cert-manager the API is not served and the
// check passes with nothing to judge.
var Certificates = &doctor.Check{
	Name:     "certificates",
	Severity: doctor.Warning,
	Origin:   "everyday",
	Reads:    []snapshot.Resource{snapshot.Certificates},
	Optional: []snapshot.Resource{snapshot.Issuers, snapshot.ClusterIssuers, snapshot.Ingresses},
	Run:      runCertificates,
	Doc: `cert-manager certificates that are expired, never issued or failing to renew, and the issuers behind them

## Why it matters
cert-manager renews a certificate well before it expires (by default when a
third of its lifetime is left: 30 days for a Let's Encrypt certificate), so a
failing renewal is silent for weeks: the old certificate still serves, the
Certificate still says ` + "`Ready`" + `, and the first symptom is every client refusing
the site on the day it expires. A certificate that was never issued leaves
its Secret missing: the Ingress serves the controller's default certificate
and pods that mount the Secret do not start. One broken issuer (an ACME
account that cannot register, a CA Secret that was deleted) stops every
certificate it signs at once.

## How it is detected
From one LIST of ` + "`certificates.cert-manager.io`" + ` (and, when readable, of
` + "`issuers`" + `, ` + "`clusterissuers`" + ` and Ingresses; a cluster without cert-manager answers
404: the check passes with nothing to judge, and its reason and the report's last line say the add-on is not installed). For each Certificate, from its status:
- ` + "`notAfter`" + ` in the past: **critical**, the certificate in its Secret has expired;
- ` + "`Ready=False`" + ` for 10 minutes or more: never issued (no ` + "`notAfter`" + `) or not
  matching its spec; warning;
- ` + "`Ready=True`" + ` but the renewal fails (` + "`Issuing=False`" + ` with reason ` + "`Failed`" + ` for 10
  minutes after two attempts or fewer than 7 days before expiry, or
  ` + "`renewalTime`" + ` more than an hour past, said as "renewing" when an issuance is
  under way): warning, **critical** when it expires within 7 days.
The message quotes the failure in cert-manager's words (the ` + "`Issuing`" + `
condition's message carries the issuer's error, such as an ACME rate limit or
an unreachable HTTP-01 path), counts the failed attempts and computes the
next retry from cert-manager's back-off (one hour doubled per failed attempt,
at most 32 hours), and names the Ingresses that serve the Secret.
A Certificate whose issuer (an Issuer or ClusterIssuer of cert-manager) is
not ready is not reported alone: the issuer gets one finding, in its own
words, listing the certificates it holds back. An issuer that does not exist
is named as the cause. Certificates with no status at all 10 minutes after
their creation are one finding: cert-manager's controller is not running (or
was uninstalled and left its CRDs). Certificates being deleted, younger than
10 minutes, or whose issuer is external (another API group) are judged only
on their own status.

## How to fix
Read the chain cert-manager walked (` + "`kubectl describe certificate`" + `, then its
CertificateRequest, and for ACME its Order and Challenges: ` + "`kubectl get challenges -n NS`" + `
names the DNS record or HTTP path that failed). Fix the issuer or the
challenge, then trigger a new attempt at once with ` + "`cmctl renew NAME -n NS`" + `
instead of waiting for the back-off.

## References
- https://cert-manager.io/docs/troubleshooting/
- https://cert-manager.io/docs/troubleshooting/acme/
- https://cert-manager.io/docs/usage/certificate/#renewal
- https://cert-manager.io/docs/reference/cmctl/#renew`,
}

const (
	// certGrace is how long a Certificate or issuer may be not ready
	// before it is judged: issuance takes seconds (a CA) to minutes (ACME).
	certGrace = 10 * time.Minute
	// certSoon is how close an expiry makes a failing renewal critical.
	certSoon = 7 * 24 * time.Hour
	// certRenewalLate is how long past its renewal time a Certificate
	// may still be renewing.
	certRenewalLate = time.Hour
)

// certProblem is what is wrong with one Certificate.
type certProblem struct {
	cert     *snapshot.Certificate
	severity doctor.Severity
	words    string // "expired 3d ago (notAfter ...)"
	failure  string // cert-manager's words, quoted, or ""
	tail     string // what the Secret still holds, after the failure
	acme     bool   // the failure is an ACME order or challenge
}

func runCertificates(p *doctor.Pass) error {
	issuers := map[string]*snapshot.Issuer{} // "Issuer/ns/name", "ClusterIssuer//name"
	for i := range p.Snapshot.Issuers() {
		is := &p.Snapshot.Issuers()[i]
		issuers["Issuer/"+is.Namespace+"/"+is.Name] = is
	}
	for i := range p.Snapshot.ClusterIssuers() {
		is := (*snapshot.Issuer)(&p.Snapshot.ClusterIssuers()[i])
		issuers["ClusterIssuer//"+is.Name] = is
	}
	servedBy := ingressesByTLSSecret(p)

	certs := slices.Clone(p.Snapshot.Certificates()) // sorted here, not in the shared snapshot
	sort.Slice(certs, func(i, j int) bool {
		if certs[i].Namespace != certs[j].Namespace {
			return certs[i].Namespace < certs[j].Namespace
		}
		return certs[i].Name < certs[j].Name
	})
	held := map[string][]certProblem{} // not-ready issuer key -> the certificates it holds back
	users := map[string]int{}          // issuer key -> certificates that name it
	var unprocessed []string
	var unprocessedRefs []doctor.ObjectRef
	var oldest metav1.Time
	for i := range certs {
		c := &certs[i]
		if c.DeletionTimestamp != nil {
			continue
		}
		key, kind := issuerKey(c)
		if key != "" {
			users[key]++
		}
		if len(c.Status.Conditions) == 0 && c.Status.NotAfter == nil {
			if !c.CreationTimestamp.IsZero() && p.Now.Sub(c.CreationTimestamp.Time) >= certGrace {
				unprocessed = append(unprocessed, c.Namespace+"/"+c.Name)
				unprocessedRefs = append(unprocessedRefs, certRef(c.Namespace, c.Name))
				if oldest.IsZero() || c.CreationTimestamp.Before(&oldest) {
					oldest = c.CreationTimestamp
				}
			}
			continue
		}
		pr, ok := judgeCertificate(p.Now, c)
		if !ok {
			continue
		}
		if key != "" {
			if is := issuers[key]; is != nil && is.DeletionTimestamp == nil && notReadyHeld(p, is.Status.Conditions) != nil {
				held[key] = append(held[key], pr)
				continue
			}
			if is := issuers[key]; is == nil && addOnListed(p, kind == "ClusterIssuer", snapshot.ClusterIssuers, snapshot.Issuers, c.Namespace) {
				pr.failure += fmt.Sprintf("; its %s %s does not exist", kind, c.Spec.IssuerRef.Name) + issuerElsewhere(issuers, c, kind)
			} else if is != nil && is.Spec.ACME != nil {
				pr.acme = true // an order or challenge may be what waits
			}
		}
		reportCertificate(p, pr, servedBy)
	}
	reportIssuers(p, issuers, held, users)
	if len(unprocessed) > 0 {
		refs := unprocessedRefs
		p.Report(doctor.Finding{Object: refs[0], Count: len(unprocessed), Examples: doctor.Examples(unprocessed), Members: refs,
			Message: fmt.Sprintf("%s (%s) %s no status from cert-manager, %s %s ago: its controller is not running, or cert-manager was uninstalled and left its CRDs behind, so nothing is issued or renewed",
				doctor.Plural(len(unprocessed), "certificate", "certificates"), examplesEllipsis(unprocessed), map[bool]string{true: "has", false: "have"}[len(unprocessed) == 1],
				map[bool]string{true: "created", false: "the oldest created"}[len(unprocessed) == 1], human(p.Now.Sub(oldest.Time))),
			Remediation: []doctor.Remediation{{Text: "see whether cert-manager's controller runs, and read its log",
				Command: "kubectl get pods -A -l app.kubernetes.io/name=cert-manager,app.kubernetes.io/component=controller"}}})
	}
	return nil
}

// judgeCertificate says what is wrong with c, if anything.
func judgeCertificate(now time.Time, c *snapshot.Certificate) (certProblem, bool) {
	pr := certProblem{cert: c}
	ready := platformCondition(c.Status.Conditions, "Ready")
	issuing := platformCondition(c.Status.Conditions, "Issuing")
	failedIssuing := issuing != nil && issuing.Status == "False" && issuing.Reason == "Failed"
	switch {
	case failedIssuing:
		// The Issuing condition carries the request's error; some
		// versions put the detail on Ready instead and keep Issuing's short.
		msg := issuing.Message
		if ready != nil && ready.Status == "False" && ready.Message != "" && (ready.Reason == "Failed" || bareRetry(msg)) {
			msg = ready.Message
		}
		pr.failure = "; the last attempt failed: " + quote(msg)
		pr.acme = mentionsACME(msg)
	case ready != nil && ready.Status == "False":
		pr.failure = quoteReason(ready.Reason, ready.Message)
		pr.acme = mentionsACME(ready.Message)
	}
	notAfter := c.Status.NotAfter
	switch {
	case notAfter != nil && !notAfter.Time.After(now):
		pr.severity = doctor.Critical
		pr.words = fmt.Sprintf("expired %s ago (notAfter %s)", human(now.Sub(notAfter.Time)), notAfter.UTC().Format(time.RFC3339))
		if pr.failure == "" {
			pr.failure = ": cert-manager has not renewed it"
		}
	case ready != nil && ready.Status == "False":
		if !judgedLongEnough(now, c, ready) {
			return pr, false
		}
		pr.severity = doctor.Warning
		if notAfter == nil {
			pr.words = "has never been issued" + heldFor(now, ready)
		} else {
			pr.words = "is not ready" + heldFor(now, ready)
			pr.tail = fmt.Sprintf("; the certificate it holds expires in %s", human(notAfter.Sub(now)))
			if notAfter.Sub(now) < certSoon {
				pr.severity = doctor.Critical
			}
		}
	case failedIssuing && held(now, issuing.LastTransitionTime.Time, certGrace) && (failedAttempts(c) >= 2 || notAfter != nil && notAfter.Sub(now) < certSoon) ||
		c.Status.RenewalTime != nil && now.Sub(c.Status.RenewalTime.Time) > certRenewalLate:
		// One failed attempt of a certificate with time left is retried
		// within the hour; repeated failures, or an overdue renewal, are not.
		if notAfter == nil {
			return pr, false
		}
		pr.severity = doctor.Warning
		if notAfter.Sub(now) < certSoon {
			pr.severity = doctor.Critical
		}
		pr.words = "fails to renew"
		renewing := issuing != nil && issuing.Status == "True"
		if renewing {
			pr.words = "has been renewing" + heldFor(now, issuing) + " without a new certificate yet"
		}
		if r := c.Status.RenewalTime; r != nil && r.Time.Before(now) {
			pr.words += fmt.Sprintf(": renewal was due %s ago", human(now.Sub(r.Time)))
		}
		pr.words += fmt.Sprintf(" and the certificate expires in %s (notAfter %s)", human(notAfter.Sub(now)), notAfter.UTC().Format(time.RFC3339))
		switch {
		case pr.failure != "":
		case renewing:
			pr.failure = quoteReason(issuing.Reason, issuing.Message)
		default:
			pr.failure = ": cert-manager has not started a renewal"
		}
	default:
		return pr, false
	}
	if n := c.Status.FailedIssuanceAttempts; n != nil && *n > 0 {
		pr.failure += fmt.Sprintf("; %s", doctor.Plural(*n, "failed attempt", "failed attempts"))
		if last := c.Status.LastFailureTime; last != nil {
			next := last.Add(certBackoff(*n))
			if next.After(now) {
				pr.failure += fmt.Sprintf(", the next in %s", human(next.Sub(now)))
			} else {
				pr.failure += ", the next is due now"
			}
		}
	}
	pr.failure += pr.tail
	return pr, true
}

// bareRetry says whether an Issuing message is cert-manager's prefix with
// nothing after it ("The certificate request has failed to complete and
// will be retried"): some versions put the error on Ready only.
func bareRetry(msg string) bool {
	m := strings.TrimRight(strings.TrimSpace(msg), ".:")
	return m == "" || strings.HasSuffix(m, "will be retried")
}

// judgedLongEnough says whether a not-ready condition has held for
// certGrace; without a condition time, whether the Certificate has existed
// that long (unknown times count as long enough: a capture without them is
// judged on what it says).
func judgedLongEnough(now time.Time, c *snapshot.Certificate, cond *snapshot.PlatformCondition) bool {
	if !cond.LastTransitionTime.IsZero() {
		return held(now, cond.LastTransitionTime.Time, certGrace)
	}
	return held(now, c.CreationTimestamp.Time, certGrace)
}

func failedAttempts(c *snapshot.Certificate) int {
	if n := c.Status.FailedIssuanceAttempts; n != nil {
		return *n
	}
	return 0
}

// certBackoff is cert-manager's delay after n failed issuances: an hour,
// doubled per further failure, at most 32 hours.
func certBackoff(n int) time.Duration {
	if n > 6 {
		n = 6
	}
	return time.Duration(math.Pow(2, float64(n-1))) * time.Hour
}

// mentionsACME says whether cert-manager's message is about an ACME order
// or challenge (whose own status names the DNS record or path that failed).
func mentionsACME(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "acme") || strings.Contains(m, "order resource") || strings.Contains(m, "challenge")
}

func certRef(ns, name string) doctor.ObjectRef {
	return doctor.ObjectRef{APIVersion: "cert-manager.io/v1", Kind: "Certificate", Namespace: ns, Name: name}
}

// issuerKey is the key of c's issuer in runCertificates' table and its kind,
// or "" for an external issuer (another API group).
func issuerKey(c *snapshot.Certificate) (key, kind string) {
	ref := c.Spec.IssuerRef
	if ref.Name == "" || ref.Group != "" && ref.Group != snapshot.CertManagerGroup {
		return "", ""
	}
	switch ref.Kind {
	case "", "Issuer":
		return "Issuer/" + c.Namespace + "/" + ref.Name, "Issuer"
	case "ClusterIssuer":
		return "ClusterIssuer//" + ref.Name, "ClusterIssuer"
	}
	return "", ""
}

// issuerElsewhere says where an issuer of that name does exist, when the
// Certificate looked for it in the wrong place: a ClusterIssuer named by a
// reference without a kind (which means an Issuer of its namespace), or an
// Issuer of another namespace (Issuers serve their own namespace only).
func issuerElsewhere(issuers map[string]*snapshot.Issuer, c *snapshot.Certificate, kind string) string {
	name := c.Spec.IssuerRef.Name
	if kind == "Issuer" && issuers["ClusterIssuer//"+name] != nil {
		how := "set issuerRef.kind: ClusterIssuer"
		if c.Spec.IssuerRef.Kind == "" {
			how = "its issuerRef has no kind, which means an Issuer of namespace " + c.Namespace + ": " + how
		}
		return fmt.Sprintf(" (a ClusterIssuer %s does: %s)", name, how)
	}
	var other []string
	for k := range issuers {
		if ns, n, ok := strings.Cut(strings.TrimPrefix(k, "Issuer/"), "/"); ok && strings.HasPrefix(k, "Issuer/") && n == name && ns != c.Namespace {
			other = append(other, ns)
		}
	}
	if kind == "Issuer" && len(other) > 0 {
		sort.Strings(other)
		return fmt.Sprintf(" (an Issuer %s exists in namespace %s: an Issuer serves only its own namespace; use a ClusterIssuer or create it in %s)", name, strings.Join(other, ", "), c.Namespace)
	}
	return ""
}

// ingressesByTLSSecret maps "ns/secret" to the Ingresses whose TLS section
// names that Secret.
func ingressesByTLSSecret(p *doctor.Pass) map[string][]string {
	out := map[string][]string{}
	for _, ing := range p.Snapshot.Ingresses() {
		for _, tls := range ing.Spec.TLS {
			if tls.SecretName != "" {
				k := ing.Namespace + "/" + tls.SecretName
				if len(out[k]) == 0 || out[k][len(out[k])-1] != ing.Name {
					out[k] = append(out[k], ing.Name)
				}
			}
		}
	}
	return out
}

func reportCertificate(p *doctor.Pass, pr certProblem, servedBy map[string][]string) {
	c := pr.cert
	msg := fmt.Sprintf("certificate %s (secret %s) %s%s", c.Name, c.Spec.SecretName, pr.words, pr.failure)
	if ings := servedBy[c.Namespace+"/"+c.Spec.SecretName]; len(ings) > 0 {
		msg += fmt.Sprintf("; ingress %s serves it", strings.Join(doctor.Examples(ings), ", "))
	}
	p.Report(doctor.Finding{Severity: pr.severity, Object: certRef(c.Namespace, c.Name), Message: msg,
		Remediation: certRemediation(c, pr.acme)})
}

func certRemediation(c *snapshot.Certificate, acme bool) []doctor.Remediation {
	rem := []doctor.Remediation{{Text: "read cert-manager's events and the CertificateRequest it made",
		Command: fmt.Sprintf("kubectl describe certificate %s -n %s; kubectl get certificaterequests -n %s", c.Name, c.Namespace, c.Namespace)}}
	if acme {
		rem = append(rem, doctor.Remediation{Text: "see which ACME challenge fails and why (the DNS record or the HTTP-01 path the CA could not reach)",
			Command: fmt.Sprintf("kubectl get orders,challenges -n %s -o wide", c.Namespace)})
	}
	rem = append(rem, doctor.Remediation{Text: "after the fix, issue it now instead of waiting for the back-off",
		Command: fmt.Sprintf("cmctl renew %s -n %s", c.Name, c.Namespace)})
	return rem
}

// reportIssuers reports each not-ready issuer once, with the certificates
// it holds back.
func reportIssuers(p *doctor.Pass, issuers map[string]*snapshot.Issuer, held map[string][]certProblem, users map[string]int) {
	keys := make([]string, 0, len(issuers))
	for k := range issuers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		is := issuers[k]
		down := notReadyHeld(p, is.Status.Conditions)
		if down == nil || is.DeletionTimestamp != nil {
			continue
		}
		kind, ns := "Issuer", is.Namespace
		ref := doctor.ObjectRef{APIVersion: "cert-manager.io/v1", Kind: kind, Namespace: ns, Name: is.Name}
		describe := fmt.Sprintf("kubectl describe issuer %s -n %s", is.Name, ns)
		if strings.HasPrefix(k, "ClusterIssuer/") {
			kind, ns = "ClusterIssuer", ""
			ref = doctor.ObjectRef{APIVersion: "cert-manager.io/v1", Kind: kind, Name: is.Name}
			describe = "kubectl describe clusterissuer " + is.Name
		}
		msg := fmt.Sprintf("%s %s is not ready%s%s", strings.ToLower(kind), is.Name, heldFor(p.Now, down), quoteReason(down.Reason, down.Message))
		f := doctor.Finding{Severity: doctor.Warning, Object: ref}
		hs := held[k]
		switch {
		case len(hs) > 0:
			var names, worst []string
			for _, h := range hs {
				n := h.cert.Namespace + "/" + h.cert.Name
				names = append(names, n)
				f.Members = append(f.Members, certRef(h.cert.Namespace, h.cert.Name))
				if h.severity == doctor.Critical {
					f.Severity = doctor.Critical
					worst = append(worst, n+" "+h.words)
				}
			}
			msg += fmt.Sprintf(": it holds back %s (%s)", doctor.Plural(len(hs), "certificate", "certificates"), examplesEllipsis(names))
			if len(worst) > 0 {
				msg += "; " + strings.Join(doctor.Examples(worst), "; ")
			}
			f.Count, f.Examples = len(hs), doctor.Examples(names)
		case users[k] > 0:
			msg += fmt.Sprintf(": the %s that %s it cannot be issued or renewed", doctor.Plural(users[k], "certificate", "certificates"), map[bool]string{true: "names", false: "name"}[users[k] == 1])
			if ns := p.Snapshot.Namespace; ns != "" && kind == "ClusterIssuer" {
				msg = strings.Replace(msg, "that name", "in namespace "+ns+" that name", 1)
			}
		case kind == "ClusterIssuer" && p.Snapshot.Namespace != "":
			continue // certificates of namespaces out of scope may use it
		default:
			f.Severity = doctor.Info
			msg += ": no certificate names it"
		}
		f.Message = msg
		f.Remediation = []doctor.Remediation{{Text: "read the issuer's conditions and events (an ACME account that cannot register, a CA Secret that is gone, a Vault role that refuses)", Command: describe}}
		if len(hs) > 0 {
			byNS := map[string][]string{}
			var nss []string
			for _, h := range hs {
				if byNS[h.cert.Namespace] == nil {
					nss = append(nss, h.cert.Namespace)
				}
				byNS[h.cert.Namespace] = append(byNS[h.cert.Namespace], h.cert.Name)
			}
			var cmds []string
			for _, ns := range nss {
				cmds = append(cmds, fmt.Sprintf("cmctl renew %s -n %s", strings.Join(byNS[ns], " "), ns))
			}
			f.Remediation = append(f.Remediation, doctor.Remediation{Text: "after the fix, issue the held-back certificates now instead of waiting for their back-off",
				Command: strings.Join(cmds, "; ")})
		}
		p.Report(f)
	}
}
