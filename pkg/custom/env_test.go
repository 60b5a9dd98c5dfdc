package custom

import (
	"slices"
	"testing"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
)

// TestEnvMatchesTheAPIServers: the environment custom rules compile in has
// exactly the functions, overloads and macros of the API server's base CEL
// environment at its default compatibility version (what a
// ValidatingAdmissionPolicy expression gets), so a rule that works in one
// works in the other. It fails when an upgrade of k8s.io/apiserver changes
// the base environment: mirror the change in env().
func TestEnvMatchesTheAPIServers(t *testing.T) {
	ours, err := env()
	if err != nil {
		t.Fatal(err)
	}
	set, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        []cel.EnvOption{cel.Variable(ObjectVar, cel.DynType)},
	}, environment.StrictCostOpt)
	if err != nil {
		t.Fatal(err)
	}
	theirs := set.NewExpressionsEnv()
	overloads := func(e *cel.Env) []string {
		var out []string
		for name, fn := range e.Functions() {
			for _, o := range fn.OverloadDecls() {
				out = append(out, name+"/"+o.ID())
			}
		}
		slices.Sort(out)
		return out
	}
	a, b := overloads(ours), overloads(theirs)
	for _, o := range b {
		if _, found := slices.BinarySearch(a, o); !found {
			t.Errorf("the API server's environment has %s, ours does not", o)
		}
	}
	for _, o := range a {
		if _, found := slices.BinarySearch(b, o); !found {
			t.Errorf("our environment has %s, the API server's does not", o)
		}
	}
	macros := func(e *cel.Env) []string {
		var out []string
		for _, m := range e.Macros() {
			out = append(out, m.MacroKey())
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(macros(ours), macros(theirs)) {
		t.Errorf("macros differ:\nours   %v\ntheirs %v", macros(ours), macros(theirs))
	}
	t.Logf("compatibility version %s: %d overloads, %d macros", environment.DefaultCompatibilityVersion(), len(a), len(macros(ours)))
	// The same expression costs the same in both at evaluation.
	vars := map[string]any{ObjectVar: map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "a", "image": "r/a"}, map[string]any{"name": "b", "image": "x/b"}}}}}
	for _, expr := range []string{`object.spec.containers.all(c, c.image.startsWith("r/"))`, `quantity("1Gi").isGreaterThan(quantity("1Mi"))`,
		`[1, 2, 3].sum() == 6`, `"a,b".split(",").size() == 2`, `object.spec.containers.map(c, c.name).join(",").matches("^a")`} {
		cost := func(e *cel.Env, opts ...cel.ProgramOption) (uint64, error) {
			ast, iss := e.Compile(expr)
			if iss.Err() != nil {
				return 0, iss.Err()
			}
			prg, err := e.Program(ast, opts...)
			if err != nil {
				return 0, err
			}
			_, det, err := prg.Eval(vars)
			if err != nil {
				return 0, err
			}
			return *det.ActualCost(), nil
		}
		cx, err1 := cost(ours, programOptions()...)
		cy, err2 := cost(theirs)
		if err1 != nil || err2 != nil || cx != cy {
			t.Errorf("%s: cost ours %d (%v), theirs %d (%v)", expr, cx, err1, cy, err2)
		}
	}
}
