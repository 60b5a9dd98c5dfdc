package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/faultproxy"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// The gate under faults: kubectl-doctor runs through faultproxy, a
// loopback proxy in front of the scenario cluster's real API server, and
// the verdicts a CI job relies on are asserted.

// throughProxy starts a proxy in front of the scenario cluster and returns
// it with a kubeconfig (of the admin, unless from is given) pointing at it.
func throughProxy(t *testing.T, o faultproxy.Options, from ...string) (*faultproxy.Proxy, string) {
	t.Helper()
	o.Upstream, o.CAFile = scenarios.URL, scenarios.CAFile()
	p, err := faultproxy.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	kubeconfig := scenarios.Kubeconfig
	if len(from) > 0 {
		kubeconfig = from[0]
	}
	kc, err := p.Kubeconfig(kubeconfig, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p, kc
}

// scanKeys are the findings of a report as check|severity|object:
// messages carry ages ("for 40s") that differ between two scans.
func scanKeys(r doctor.Report, checks ...string) []string {
	var out []string
	for _, f := range r.Findings {
		if len(checks) == 0 || slices.Contains(checks, f.Check) {
			out = append(out, f.Check+"|"+f.Severity.String()+"|"+f.Object.String())
		}
	}
	slices.Sort(out)
	return out
}

func statuses(r doctor.Report) map[string]doctor.CheckResult {
	out := map[string]doctor.CheckResult{}
	for _, c := range r.Checks {
		out[c.Name] = c
	}
	return out
}

// baseline is a scan of the scenario cluster without faults.
func baseline(t *testing.T) doctor.Report {
	t.Helper()
	r := runDoctor(t, scenarios.Kubeconfig, "-o", "json")
	rep := decodeReport(t, r.stdout)
	if r.code != 1 || !rep.Complete {
		t.Fatalf("baseline: exit %d, complete %v: %s", r.code, rep.Complete, r.stderr)
	}
	return rep
}

// With 30% of requests failing (500, 503, 429 with Retry-After, reset
// connections, the reachability probe included), every read is retried
// to an answer: the same findings as without faults, a complete scan, and
// the retries shown in --stats and the report.
func TestFaultsRetriedChangeNothing(t *testing.T) {
	needCluster(t)
	want := baseline(t)
	p, kc := throughProxy(t, faultproxy.Options{Rule: faultproxy.Flaky(30)})
	r := runDoctor(t, kc, "-o", "json", "--stats")
	byFault, total := p.Injected()
	failed := 0
	for _, n := range byFault {
		failed += n
	}
	t.Logf("injected %v into %d requests (%d%%)", byFault, total, 100*failed/total)
	if failed < total/5 {
		t.Errorf("only %d of %d requests failed", failed, total)
	}
	rep := decodeReport(t, r.stdout)
	if r.code != 1 || !rep.Complete || len(rep.Incomplete) != 0 {
		t.Fatalf("exit %d, complete %v %+v, want 1 and complete\n%s", r.code, rep.Complete, rep.Incomplete, r.stderr)
	}
	if got, want := scanKeys(rep), scanKeys(want); !slices.Equal(got, want) {
		t.Errorf("findings under faults differ:\n got %v\nwant %v", got, want)
	}
	for name, c := range statuses(want) {
		if got := statuses(rep)[name]; got.Status != c.Status {
			t.Errorf("%s: %s under faults, %s without", name, got.Status, c.Status)
		}
	}
	if byFault[faultproxy.Status500]+byFault[faultproxy.Status503] == 0 || byFault[faultproxy.TooMany] == 0 || byFault[faultproxy.Reset] == 0 {
		t.Errorf("the proxy did not inject every kind of fault: %v", byFault)
	}
	// Each read counts once; its retries are counted and shown.
	if rep.Retries == 0 || rep.Requests != want.Requests {
		t.Errorf("report: %d requests (+%d retries), want %d requests as without faults, and retries", rep.Requests, rep.Retries, want.Requests)
	}
	if !regexp.MustCompile(`(?m)^\s+GET\s+200 .*\(after (500|503|429|reset)`).MatchString(r.stderr) ||
		!regexp.MustCompile(`(?m)^\s+\d+ requests? retried: \d+ more attempts?$`).MatchString(r.stderr) {
		t.Errorf("--stats does not show the retries:\n%s", r.stderr)
	}
}

// Latency alone changes nothing.
func TestFaultsLatency(t *testing.T) {
	needCluster(t)
	want := baseline(t)
	_, kc := throughProxy(t, faultproxy.Options{Latency: 150 * time.Millisecond})
	r := runDoctor(t, kc, "-o", "json")
	rep := decodeReport(t, r.stdout)
	if r.code != 1 || !rep.Complete || !slices.Equal(scanKeys(rep), scanKeys(want)) {
		t.Errorf("with latency: exit %d, complete %v, findings %v, want %v", r.code, rep.Complete, scanKeys(rep), scanKeys(want))
	}
}

// Every read answered 500: nothing was checked, so the gate must not pass.
// The report is printed all the same, every check errored with its reason,
// "complete": false, and one line on stderr says why; --allow-incomplete
// accepts it.
func TestFaultsEveryRead500(t *testing.T) {
	needCluster(t)
	_, kc := throughProxy(t, faultproxy.Options{Rule: faultproxy.Always(faultproxy.Status500, faultproxy.Reads)})
	r := runDoctor(t, kc, "-o", "json", "--timeout", "10s")
	rep := decodeReport(t, r.stdout)
	if r.code != 2 || rep.Complete {
		t.Errorf("exit %d, complete %v, want 2 and incomplete", r.code, rep.Complete)
	}
	for _, c := range rep.Checks {
		if c.Status != doctor.StatusError || !regexp.MustCompile(`^listing [^:]+: (injected by faultproxy|an error on the server)|^timed out reading `).MatchString(c.Reason) {
			t.Errorf("%s: %s %q, want error with the server's reason", c.Name, c.Status, c.Reason)
		}
	}
	n := len(checks.All())
	if len(rep.Checks) != n || len(rep.Incomplete) != n+1 || rep.Incomplete[n].Reason != fmt.Sprintf("no check could run: 0 of %d skipped, %d errored", n, n) {
		t.Errorf("incomplete %+v", rep.Incomplete)
	}
	oneErrorLine(t, r, fmt.Sprintf("incomplete scan: %d checks of %d could not run (no check could run", n, n))

	table := runDoctor(t, kc, "--timeout", "10s", "--allow-incomplete")
	if table.code != 0 || !strings.Contains(table.stdout, "error pod-storm: listing pods: ") || !strings.Contains(table.stdout, "INCOMPLETE") ||
		!strings.HasPrefix(table.stderr, "warning: incomplete scan: ") {
		t.Errorf("--allow-incomplete: exit %d\n%s\n%s", table.code, table.stdout, table.stderr)
	}
}

// A hung LIST of pods costs the checks that need pods, not the scan: they
// say "timed out reading pods after ...", every other check reports as
// without the fault, and the exit code follows the contract: 1 with
// critical findings (more reads can only add findings), 2 when nothing
// is at --fail-on.
func TestFaultsHungRead(t *testing.T) {
	needCluster(t)
	want := baseline(t)
	p, kc := throughProxy(t, faultproxy.Options{Rule: faultproxy.Always(faultproxy.Hang, faultproxy.Path("/api/v1/pods"))})
	r := runDoctor(t, kc, "-o", "json", "--timeout", "8s")
	rep := decodeReport(t, r.stdout)
	if r.code != 1 || rep.Complete {
		t.Errorf("exit %d, complete %v, want 1 (critical findings) and incomplete", r.code, rep.Complete)
	}
	if !regexp.MustCompile(`^warning: incomplete scan: \d+ checks of \d+ could not run \([a-z, -]+: timed out reading pods after [\d.]+s\)\n$`).MatchString(r.stderr) {
		t.Errorf("stderr %q", r.stderr)
	}
	var podChecks []string
	for name, c := range statuses(rep) {
		if c.Status == doctor.StatusError {
			podChecks = append(podChecks, name)
		}
	}
	// A finding the baseline folded (Via) into a finding of a check that
	// errored here stands on its own: never silently dropped.
	unfolded := map[string]int{}
	for _, f := range rep.Findings {
		if slices.Contains(podChecks, f.Check) {
			continue
		}
		for _, w := range want.Findings {
			if slices.Contains(podChecks, w.Check) && slices.ContainsFunc(w.Explains, func(e string) bool { return strings.HasPrefix(e, f.Check+" "+f.Object.String()+": ") }) {
				unfolded[f.Check+"|"+f.Severity.String()+"|"+f.Object.String()]++
			}
		}
	}
	for name, c := range statuses(rep) {
		if c.Status == doctor.StatusError {
			if !regexp.MustCompile(`^timed out reading pods after [\d.]+s$`).MatchString(c.Reason) {
				t.Errorf("%s: %q", name, c.Reason)
			}
			continue
		}
		extra := 0
		for k, n := range unfolded {
			if strings.HasPrefix(k, name+"|") {
				extra += n
			}
		}
		if wc := statuses(want)[name]; c.Status != wc.Status || c.Findings-extra != wc.Findings {
			t.Errorf("%s: %s with %d findings, want %s with %d as without the hang", name, c.Status, c.Findings, wc.Status, wc.Findings)
		}
	}
	slices.Sort(podChecks)
	var readPods []string
	for _, c := range checks.All() {
		if slices.Contains(c.Reads, snapshot.Pods) {
			readPods = append(readPods, c.Name)
		}
	}
	slices.Sort(readPods)
	if want := readPods; !slices.Equal(podChecks, want) {
		t.Errorf("errored checks %v, want those reading pods %v", podChecks, want)
	}
	var others []string
	for _, c := range rep.Checks {
		if !slices.Contains(podChecks, c.Name) {
			others = append(others, c.Name)
		}
	}
	got := slices.DeleteFunc(scanKeys(rep, others...), func(k string) bool { return unfolded[k] > 0 })
	if want := scanKeys(want, others...); !slices.Equal(got, want) {
		t.Errorf("findings of the other checks:\n got %v\nwant %v", got, want)
	}
	if len(unfolded) == 0 {
		t.Error("no finding folded into a check reading pods stood on its own (ingress ec-site into service search)")
	}
	if byFault, _ := p.Injected(); byFault[faultproxy.Hang] == 0 {
		t.Error("nothing hung")
	}

	r = runDoctor(t, kc, "--timeout", "8s", "--fail-on", "never")
	oneErrorLine(t, r, "timed out reading pods after ")
	if !strings.Contains(r.stdout, "error pod-storm: timed out reading pods after ") || !strings.Contains(r.stdout, "CRITICAL") {
		t.Errorf("the table of a partial scan:\n%s", r.stdout)
	}
}

// Ctrl-C while a read hangs prints what is known: the report of every
// read that finished, the unfinished ones named, exit 2.
func TestFaultsInterrupt(t *testing.T) {
	needCluster(t)
	p, kc := throughProxy(t, faultproxy.Options{Rule: faultproxy.Always(faultproxy.Hang, faultproxy.Path("/api/v1/pods"))})
	cmd := exec.Command(doctorBin, "-o", "json", "--fail-on", "never")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kc, "NO_COLOR=1", "HOME="+t.TempDir())
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := p.Wait(ctx); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("the pods read never reached the proxy: %v", err)
	}
	// Ctrl-C once every other read has been answered: each planned read
	// but pods, by its URL path.
	others := map[string]int{}
	for _, r := range snapshot.Plan(doctor.Reads(checks.All())) {
		if r != snapshot.Pods {
			others[urlPath(r)]++
		}
	}
	if err := p.WaitForwarded(ctx, others); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("the other reads were not all answered: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit %v after Ctrl-C, want 2\n%s", err, errOut.String())
	}
	rep := decodeReport(t, out.String())
	if rep.Complete {
		t.Error("complete after Ctrl-C")
	}
	// The checks that need pods say why they could not run. The others ran:
	// their reads were answered before Ctrl-C (the proxy saw to it), though
	// one may still have been on its way in (a large /metrics), and then
	// says it was interrupted too.
	readsPods := map[string]bool{}
	for _, c := range checks.All() {
		readsPods[c.Name] = slices.Contains(c.Reads, snapshot.Pods)
	}
	interrupted := regexp.MustCompile(`^interrupted before reading \S+ finished(; interrupted before reading \S+ finished)*$`)
	ran := 0
	for _, c := range rep.Checks {
		switch {
		case readsPods[c.Name]:
			if c.Status != doctor.StatusError || !strings.Contains(c.Reason, "interrupted before reading pods finished") {
				t.Errorf("%s: %s %q", c.Name, c.Status, c.Reason)
			}
		case c.Status == doctor.StatusPassed || c.Status == doctor.StatusFailed:
			ran++
		case c.Status != doctor.StatusError || !interrupted.MatchString(c.Reason):
			t.Errorf("%s: %s %q", c.Name, c.Status, c.Reason)
		}
	}
	if ran == 0 {
		t.Error("no check ran on what was read before Ctrl-C")
	}
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	// The groups are listed by check name: a read still on its way in (as
	// above) may come before the pods group.
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^error: interrupted; incomplete scan: \d+ checks of \d+ could not run \((?:[a-z, -]+: interrupted before reading \S+ finished; )*[a-z, -]+: interrupted before reading pods finished[;)]`).MatchString(last) {
		t.Errorf("stderr %q", errOut.String())
	}
	t.Logf("after Ctrl-C: %d checks ran on what was read, %d did not", ran, len(rep.Checks)-ran)
}

// A user bound to the built-in view ClusterRole: told on stderr which reads
// are forbidden (from a SelfSubjectRulesReview, not by
// sending them: the audit log shows no such read), the cluster-scoped
// checks skipped with the verb they need, and every other check's findings
// as the admin gets them. The scan is complete: skipped for RBAC is not
// an error while other checks ran.
func TestFaultsViewUser(t *testing.T) {
	needCluster(t)
	want := baseline(t)
	kc, user := viewUser(t)
	r := runDoctor(t, kc, "-o", "json")
	rep := decodeReport(t, r.stdout)
	if r.code != 1 || !rep.Complete {
		t.Errorf("exit %d, complete %v %+v, want 1 (critical pod-storm finding) and complete\n%s", r.code, rep.Complete, rep.Incomplete, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	denied, _, _ := strings.Cut(lines[0], " (in all namespaces")
	if len(lines) != 1 || !regexp.MustCompile(`^warning: this user may not list [^;]*\bnodes\b.*get /metrics \(in all namespaces\): \d+ checks skipped: .*node-taints`).MatchString(lines[0]) ||
		regexp.MustCompile(`\b(pods|deployments\.apps|namespaces)\b`).MatchString(denied) {
		t.Errorf("stderr should be one warning naming the forbidden reads:\n%s", r.stderr)
	}
	var ran []string
	for _, c := range rep.Checks {
		switch c.Status {
		case doctor.StatusSkipped:
			// Only cluster-scoped reads, RBAC objects and custom
			// resources (the Gateway API's, cert-manager's, Argo CD's, Flux's,
			// ESO's: installed, they aggregate their own into view) are beyond view:
			// no other reason says "in all namespaces".
			const read = `(list on [a-z0-9.]+\.((rbac\.authorization|gateway\.networking)\.k8s\.io|cert-manager\.io|argoproj\.io|toolkit\.fluxcd\.io|external-secrets\.io) in all namespaces|list on [a-z0-9.]+|get on /metrics)`
			if !regexp.MustCompile(`^forbidden: needs ` + read + `(; forbidden: needs ` + read + `)*$`).MatchString(c.Reason) {
				t.Errorf("%s skipped: %q", c.Name, c.Reason)
			}
		case doctor.StatusPassed, doctor.StatusFailed:
			ran = append(ran, c.Name)
		default:
			t.Errorf("%s: %s %q", c.Name, c.Status, c.Reason)
		}
	}
	// stderr's count is the report's: every check skipped here was skipped
	// for a forbidden read.
	if m := regexp.MustCompile(`: (\d+) checks skipped: `).FindStringSubmatch(lines[0]); m == nil || m[1] != strconv.Itoa(len(rep.Checks)-len(ran)) {
		t.Errorf("stderr says %v checks skipped, the report %d:\n%s", m, len(rep.Checks)-len(ran), lines[0])
	}
	// workload-pods and service-endpoints read APIServices and webhook
	// configurations only as optional evidence: they run for the view user.
	for _, name := range []string{"pod-storm", "rollout-history", "workload-pods", "service-endpoints"} {
		if !slices.Contains(ran, name) {
			t.Errorf("workload check %s did not run for the view user", name)
		}
	}
	// Every admin finding of those checks, and besides them only the
	// backends the admin's APIService and webhook findings named (the view
	// user cannot see those findings, so the backends are not folded).
	// A finding whose severity the admin's scan raised by folding in a
	// finding of a check the view user cannot run, or that says what it
	// could not read (Partial: a Service nothing readable refers to stays
	// a warning), is compared without its severity.
	loose := map[string]bool{}
	for _, f := range want.Findings {
		for _, e := range f.Explains {
			if c, _, _ := strings.Cut(e, " "); !slices.Contains(ran, c) {
				loose[f.Check+"|"+f.Object.String()] = true
			}
		}
	}
	for _, f := range rep.Findings {
		if f.Partial != "" && f.Check == "service-endpoints" {
			loose[f.Check+"|"+f.Object.String()] = true
		}
	}
	relax := func(keys []string) []string {
		for i, k := range keys {
			parts := strings.SplitN(k, "|", 3)
			if loose[parts[0]+"|"+parts[2]] {
				keys[i] = parts[0] + "|*|" + parts[2]
			}
		}
		return keys
	}
	got, all := relax(scanKeys(rep, ran...)), relax(scanKeys(want, ran...))
	var linked []string
	for _, f := range want.Findings {
		if f.Check == "apiservice-unavailable" || f.Check == "admission-webhooks" {
			linked = append(linked, f.Message)
		}
		// A finding the admin saw folded into the root cause of a check
		// the view user cannot run (sandbox-failures needs nodes) stands
		// on its own for the view user: never silently dropped.
		if !slices.Contains(ran, f.Check) {
			linked = append(linked, f.Explains...)
		}
	}
	// ingress-backends runs for the view user without IngressClasses
	// (cluster-scoped): an Ingress naming a class that does not exist is
	// the one finding it cannot make, and its coverage says so.
	classless := map[string]bool{}
	if statuses(rep)["ingress-backends"].Coverage != doctor.CoverageFull {
		for _, f := range want.Findings {
			if f.Check == "ingress-backends" && strings.Contains(f.Message, "ingressClassName") {
				classless[f.Check+"|"+f.Severity.String()+"|"+f.Object.String()] = true
			}
		}
	}
	// pvc-pending runs for the view user without StorageClasses (cluster-
	// scoped): a missing class, no default class or a class that binds on
	// first use are what it leaves out rather than guess.
	if statuses(rep)["pvc-pending"].Coverage != doctor.CoverageFull {
		for _, f := range want.Findings {
			if f.Check == "pvc-pending" && (strings.Contains(strings.ToLower(f.Message), "storageclass") || strings.Contains(f.Message, "binds on first use")) {
				classless[f.Check+"|"+f.Severity.String()+"|"+f.Object.String()] = true
			}
		}
	}
	for _, k := range all {
		if !slices.Contains(got, k) && !classless[k] {
			t.Errorf("the view user misses %s", k)
		}
	}
	for _, k := range got {
		if slices.Contains(all, k) {
			continue
		}
		name := k[strings.LastIndex(k, "/")+1:]
		if !slices.ContainsFunc(linked, func(m string) bool { return strings.Contains(m, name) }) {
			t.Errorf("the view user gets %s, which no admin finding names as a backend", k)
		}
	}
	if statuses(rep)["node-taints"].Reason != "forbidden: needs list on nodes" {
		t.Errorf("node-taints: %+v", statuses(rep)["node-taints"])
	}
	// Not by failing first: no forbidden read reached the API server.
	time.Sleep(200 * time.Millisecond)
	for _, line := range readLines(t, scenarios.AuditLog()) {
		var e struct {
			User struct {
				Username string `json:"username"`
			} `json:"user"`
			RequestURI     string `json:"requestURI"`
			ResponseStatus *struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.User.Username == user && e.ResponseStatus != nil && e.ResponseStatus.Code == 403 {
			t.Errorf("the view user was refused %s: the access review should have kept it from being sent", e.RequestURI)
		}
	}
}

// viewUser binds a service account to the built-in view ClusterRole and
// returns a kubeconfig with a token for it, and its user name.
func viewUser(t *testing.T) (string, string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", scenarios.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const ns, name = "default", "doctor-viewer"
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tok, err := c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := clientcmd.LoadFromFile(scenarios.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range raw.AuthInfos {
		u.Token = tok.Status.Token
	}
	path := t.TempDir() + "/viewer.kubeconfig"
	if err := clientcmd.WriteToFile(*raw, path); err != nil {
		t.Fatal(err)
	}
	return path, "system:serviceaccount:" + ns + ":" + name
}

// urlPath is where a cluster-wide read of r goes.
func urlPath(r snapshot.Resource) string {
	switch {
	case r.Path != "":
		return r.Path
	case r.Group == "":
		return "/api/" + r.Version + "/" + r.Resource
	}
	return "/apis/" + r.Group + "/" + r.Version + "/" + r.Resource
}
