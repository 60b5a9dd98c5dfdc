// Package custom turns the custom checks of a config file into ordinary
// doctor.Checks whose rule is a CEL expression, evaluated in the environment
// Kubernetes gives ValidatingAdmissionPolicy expressions: cel-go with the
// Kubernetes libraries (URLs, regex, lists, quantities, IPs, CIDRs,
// semver, format) and the API server's per-call cost limit. A platform team
// can then add a rule without forking, and the rule reads the same shared
// snapshot as the built-in checks: one LIST per resource per scan.
package custom

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/library"

	"github.com/kubectl-doctor/kubectl-doctor/pkg/config"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// ObjectVar is the variable a rule sees the object as, as in a
// ValidatingAdmissionPolicy.
const ObjectVar = "object"

// PerCallLimit is the CEL cost one evaluation may spend: the API server's
// own limit for one validation expression (roughly 0.1s of work).
const PerCallLimit = celconfig.PerCallLimit

// PerRuleLimit is the CEL cost one rule may spend over all the objects of a
// scan: a thousand times the per-call limit (about 100s of work at worst,
// far more than any sane rule needs on a large cluster). A rule that
// exceeds it errors, naming itself, instead of outlasting --timeout; the
// scan's deadline stops it sooner.
const PerRuleLimit = 1000 * PerCallLimit

// env builds the CEL environment of a ValidatingAdmissionPolicy expression
// as k8s.io/apiserver/pkg/cel/environment's base environment defines it at
// its default compatibility version (Kubernetes 1.36 for the v0.37
// libraries): the same language options, the same Kubernetes and cel-go
// extension libraries at the same versions, the same cost model and
// per-call limit, plus the object variable. It is spelled out here rather
// than built with the environment package, which would link the API
// server's feature gates and metrics (Prometheus, OpenTelemetry) into
// every run for +11 MB of binary; TestEnvMatchesTheAPIServers keeps the
// two in step when the libraries are upgraded.
func env() (*cel.Env, error) {
	return cel.NewEnv(
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		library.URLs(),
		library.Regex(),
		cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
		library.Lists(library.ListsVersion(0)), // v1 from compatibility version 1.37
		library.Authz(),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		library.Quantity(),
		cel.ASTValidators(
			cel.ValidateDurationLiterals(),
			cel.ValidateTimestampLiterals(),
			cel.ValidateRegexLiterals(),
			cel.ValidateHomogeneousAggregateLiterals(),
		),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		library.IP(),
		library.CIDR(),
		library.Format(),
		library.AuthzSelectors(),
		ext.TwoVarComprehensions(),
		library.SemverLib(library.SemverVersion(1)),
		ext.Lists(ext.ListsVersion(3)),
		cel.Variable(ObjectVar, cel.DynType),
	)
}

// programOptions are the base environment's evaluation options: the
// per-call cost limit, tracked with the Kubernetes libraries' cost model.
func programOptions() []cel.ProgramOption {
	return []cel.ProgramOption{
		cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
		cel.CostLimit(PerCallLimit),
		cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)),
		cel.CostTracking(&library.CostEstimator{}),
		cel.InterruptCheckFrequency(100),
	}
}

// Compile compiles every custom check of cfg once, and returns them as
// checks, in file order. Compile and type errors are returned as one
// *config.Error naming each check, field and line.
func Compile(cfg *config.Config) ([]*doctor.Check, error) {
	return compileWithBudget(cfg, PerRuleLimit)
}

// compileWithBudget is Compile with each rule's total cost budget.
func compileWithBudget(cfg *config.Config, budget uint64) ([]*doctor.Check, error) {
	if cfg == nil || len(cfg.Custom) == 0 {
		return nil, nil
	}
	e, err := env()
	if err != nil {
		return nil, fmt.Errorf("internal: building the CEL environment: %w", err)
	}
	var out []*doctor.Check
	var problems []config.Problem
	for i, c := range cfg.Custom {
		field := fmt.Sprintf("custom[%d](%s)", i, c.Name)
		rule, err := compile(e, c.Rule, cel.BoolType)
		if err != nil {
			problems = append(problems, config.Problem{Line: c.RuleLine, Field: field + ".rule", Msg: err.Error()})
		}
		var msg cel.Program
		if c.Message != "" {
			if msg, err = compile(e, c.Message, cel.StringType); err != nil {
				problems = append(problems, config.Problem{Line: c.MessageLine, Field: field + ".message", Msg: err.Error()})
			}
		}
		if len(problems) > 0 {
			continue
		}
		out = append(out, newCheck(cfg.Path, c, rule, msg, budget))
	}
	if len(problems) > 0 {
		return nil, &config.Error{Path: cfg.Path, Problems: problems}
	}
	return out, nil
}

// compile parses and type-checks expr, which must be of type want (or dyn,
// then checked at evaluation), and plans it with the cost limit.
func compile(e *cel.Env, expr string, want *cel.Type) (cel.Program, error) {
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		var msgs []string
		for _, er := range iss.Errors() {
			msgs = append(msgs, fmt.Sprintf("column %d: %s", er.Location.Column()+1, er.Message))
		}
		return nil, fmt.Errorf("invalid CEL: %s", strings.Join(msgs, "; "))
	}
	if t := ast.OutputType(); !t.IsExactType(want) && !t.IsExactType(cel.DynType) && !t.IsExactType(cel.AnyType) {
		return nil, fmt.Errorf("CEL expression has type %s, want %s", t, want)
	}
	prg, err := e.Program(ast, programOptions()...)
	if err != nil {
		return nil, fmt.Errorf("invalid CEL: %v", err)
	}
	return prg, nil
}

func newCheck(file string, c config.Custom, rule, msg cel.Program, budget uint64) *doctor.Check {
	title := c.Title
	if title == "" {
		title = fmt.Sprintf("Custom rule on %s: %s", c.Resource, c.Rule)
	}
	body := c.Description
	if body != "" {
		body += "\n\n"
	}
	body += fmt.Sprintf("A custom check declared in `%s` (line %d). Every %s object must satisfy the CEL rule\n\n"+
		"```cel\n%s\n```\n\nand each object where it is false is reported with severity %s. The rule sees the object as "+
		"kubectl-doctor's snapshot holds it: managedFields, the last-applied annotation, container env, "+
		"commands, probes, lifecycle hooks and ports, and volume sources other than hostPath and "+
		"persistentVolumeClaim are trimmed away.", file, c.Line, c.Resource, c.Rule, c.Severity)
	r := &runner{c: c, rule: rule, msg: msg, budget: budget}
	return &doctor.Check{
		Name:     c.Name,
		Doc:      title + "\n\n" + body,
		Severity: c.Severity,
		Origin:   "custom rule",
		Reads:    []snapshot.Resource{c.Resource},
		Run:      r.run,
	}
}

type runner struct {
	c         config.Custom
	rule, msg cel.Program
	// budget is the cost the rule may spend over all objects.
	budget uint64
}

// maxErrors bounds how many evaluation errors a failed run names.
const maxErrors = 3

func (r *runner) run(p *doctor.Pass) error {
	res := r.c.Resource
	gv := res.GVR().GroupVersion().String()
	var failed []string
	var first error
	nErr := 0
	objs := p.Snapshot.Objects(res)
	ctx := p.Context
	if ctx == nil {
		ctx = context.Background()
	}
	var spent uint64
	for i, o := range objs {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("rule %q stopped by the scan's deadline (--timeout) after %d of %d %s: %w", r.c.Rule, i, len(objs), res, err)
		}
		if spent > r.budget {
			return fmt.Errorf("rule %q exceeded its cost budget (%d) after %d of %d %s: simplify it or narrow its resource",
				r.c.Rule, r.budget, i, len(objs), res)
		}
		m, err := meta.Accessor(o)
		if err != nil {
			continue
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return fmt.Errorf("converting %s: %w", res, err)
		}
		u["apiVersion"], u["kind"] = gv, res.Kind
		ref := doctor.ObjectRef{APIVersion: gv, Kind: res.Kind, Namespace: m.GetNamespace(), Name: m.GetName()}
		vars := map[string]any{ObjectVar: u}
		ok, cost, err := evalBool(ctx, r.rule, vars)
		spent += cost
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("rule %q stopped by the scan's deadline (--timeout) after %d of %d %s: %w", r.c.Rule, i, len(objs), res, ctx.Err())
		}
		if err != nil {
			nErr++
			if first == nil {
				first = err
			}
			if len(failed) < maxErrors {
				failed = append(failed, name(ref))
			}
			continue
		}
		if ok {
			continue
		}
		p.Report(doctor.Finding{
			Object:      ref,
			Message:     r.message(vars, ref),
			Examples:    []string{name(ref)},
			Remediation: r.remediation(ref),
		})
	}
	if first != nil {
		return fmt.Errorf("rule %q failed to evaluate on %d of %d %s (%s: %v); guard optional fields with has()",
			r.c.Rule, nErr, len(objs), res, strings.Join(failed, ", "), first)
	}
	return nil
}

func name(ref doctor.ObjectRef) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}

// evalBool evaluates a rule, interruptibly, and returns its cost.
func evalBool(ctx context.Context, prg cel.Program, vars map[string]any) (bool, uint64, error) {
	v, det, err := prg.ContextEval(ctx, vars)
	var cost uint64
	if det != nil && det.ActualCost() != nil {
		cost = *det.ActualCost()
	}
	if err != nil {
		return false, cost, err
	}
	b, ok := v.(types.Bool)
	if !ok {
		return false, cost, fmt.Errorf("rule returned %s, want bool", typeName(v))
	}
	return bool(b), cost, nil
}

func typeName(v ref.Val) string {
	if v == nil {
		return "nothing"
	}
	return v.Type().TypeName()
}

// message evaluates the message expression; the default, or an expression
// that fails on this object, gives a message naming the rule.
func (r *runner) message(vars map[string]any, ref doctor.ObjectRef) string {
	def := fmt.Sprintf("%s %s does not satisfy %s", strings.ToLower(ref.Kind), name(ref), r.c.Rule)
	if r.msg == nil {
		return def
	}
	v, _, err := r.msg.Eval(vars)
	if err != nil {
		return def + " (message expression failed: " + err.Error() + ")"
	}
	s, err := v.ConvertToNative(reflect.TypeFor[string]())
	if err != nil {
		return def
	}
	text := strings.TrimSpace(s.(string))
	if text == "" {
		return def
	}
	return fmt.Sprintf("%s %s %s", strings.ToLower(ref.Kind), name(ref), text)
}

func (r *runner) remediation(ref doctor.ObjectRef) []doctor.Remediation {
	if r.c.Remediation == "" {
		return []doctor.Remediation{{Text: "inspect the object", Command: inspect(ref)}}
	}
	s := strings.NewReplacer("{{name}}", ref.Name, "{{namespace}}", ref.Namespace, "{{kind}}", strings.ToLower(ref.Kind)).Replace(r.c.Remediation)
	if strings.HasPrefix(s, "kubectl ") {
		return []doctor.Remediation{{Text: "as the custom check " + r.c.Name + " suggests", Command: s}}
	}
	return []doctor.Remediation{{Text: s, Command: inspect(ref)}}
}

func inspect(ref doctor.ObjectRef) string {
	cmd := "kubectl get " + strings.ToLower(ref.Kind) + " " + ref.Name
	if ref.Namespace != "" {
		cmd += " -n " + ref.Namespace
	}
	return cmd + " -o yaml"
}
