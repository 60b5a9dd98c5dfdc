package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-doctor/kubectl-doctor/checks"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/baseline"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/config"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/custom"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/doctor"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/report"
	"github.com/kubectl-doctor/kubectl-doctor/pkg/snapshot"
)

// DocsURL is where the doc page of a built-in check is published.
const DocsURL = "https://github.com/kubectl-doctor/kubectl-doctor/blob/main/docs/checks/"

// configSource is --config: a path, or the first default location that
// exists when it is empty.
type configSource struct {
	Path string
	// Profiles are --profile: opt-in check sets (hygiene) added to the
	// built-in checks, which stay quiet about them by default.
	Profiles []string
}

func (c *configSource) addFlag(fs *pflag.FlagSet) {
	fs.StringVar(&c.Path, "config", "", "Config file (default: the first of ./.kubectl-doctor.yaml and $XDG_CONFIG_HOME/kubectl-doctor/config.yaml that exists)")
	fs.StringSliceVar(&c.Profiles, "profile", nil, "Also run an opt-in set of checks: "+strings.Join(checks.Profiles(), ", ")+" (popeye-style advice that breaks nothing, quiet by default)")
}

// registry reads the config and returns it with every check it knows of:
// the built-in ones, then the config's custom checks, compiled. A missing
// --config file, a mistake in the file or a CEL error is an exit-2 error.
func (c *configSource) registry() ([]*doctor.Check, *config.Config, error) {
	all := checks.All()
	for _, p := range c.Profiles {
		extra := checks.Profile(p)
		if extra == nil {
			return nil, nil, usageError("--profile: unknown profile %q (known: %s)", p, strings.Join(checks.Profiles(), ", "))
		}
		all = append(all, extra...)
	}
	if err := doctor.Validate(all); err != nil {
		return nil, nil, fmt.Errorf("internal: invalid check registry: %w", err)
	}
	path := c.Path
	if path == "" {
		path = config.Find()
	}
	if path == "" {
		return all, nil, nil
	}
	cfg, err := config.Load(path, config.CheckNames(all))
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	customs, err := custom.Compile(cfg)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, nil, usageError("%v", err)
		}
		return nil, nil, &exitError{Code: ExitError, Err: err}
	}
	all = append(all, customs...)
	if err := doctor.Validate(all); err != nil {
		return nil, nil, usageError("config %s: %v", path, err)
	}
	return all, cfg, nil
}

// ciOptions are the scan flags for CI: config, baseline, suppressions.
type ciOptions struct {
	configSource
	Baseline       string
	WriteBaseline  string
	ShowSuppressed bool

	cfg  *config.Config
	base *baseline.Baseline
	// disabled are the registry's checks that --check/--skip or the
	// config turned off, with why: reported as disabled, never dropped.
	disabled map[string][]string
	// all is the registry, built-in and custom checks: SARIF describes
	// the disabled rules too.
	all []*doctor.Check
}

func (o *ciOptions) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.addFlag(fs)
	fs.StringVar(&o.Baseline, "baseline", "", "A JSON report of an earlier scan (kubectl doctor -o json > baseline.json): its findings are known and do not fail --fail-on; new ones do")
	fs.StringVar(&o.WriteBaseline, "write-baseline", "", "After the scan, write its findings to this file as a compact baseline (one entry per object) for --baseline; not written when the scan is incomplete")
	fs.BoolVar(&o.ShowSuppressed, "show-suppressed", false, "Also print the findings suppressed by the config or by annotations, with the reason")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	_ = cmd.MarkFlagFilename("baseline", "json", "yaml")
	_ = cmd.MarkFlagFilename("write-baseline", "yaml")
}

// selectChecks is the registry (built-in and custom checks) narrowed by
// --check/--skip, without the checks the config switches off unless
// --check names them.
func (o *ciOptions) selectChecks(only, skip []string) ([]*doctor.Check, error) {
	all, cfg, err := o.registry()
	if err != nil {
		return nil, err
	}
	o.cfg, o.all = cfg, all
	if o.Baseline != "" {
		if o.base, err = baseline.Load(o.Baseline); err != nil {
			return nil, usageError("--baseline: %v", err)
		}
	}
	if o.WriteBaseline != "" {
		// Found out before the scan, not after it.
		if err := writableFile(o.WriteBaseline); err != nil {
			return nil, usageError("--write-baseline: %v", err)
		}
	}
	selected, err := doctor.Select(all, only, skip)
	if err != nil {
		return nil, usageError("--check/--skip: %v", err)
	}
	selected = slices.DeleteFunc(selected, func(c *doctor.Check) bool {
		return !cfg.Enabled(c.Name) && !slices.Contains(only, c.Name)
	})
	o.disabled = map[string][]string{}
	for _, c := range all {
		switch {
		case slices.Contains(selected, c):
		case slices.Contains(skip, c.Name):
			o.disabled["disabled by --skip"] = append(o.disabled["disabled by --skip"], c.Name)
		case len(only) > 0 && !slices.Contains(only, c.Name):
			o.disabled["not named by --check"] = append(o.disabled["not named by --check"], c.Name)
		default:
			why := "disabled by the config"
			if cfg != nil {
				why = "disabled by the config " + cfg.Path
			}
			o.disabled[why] = append(o.disabled[why], c.Name)
		}
	}
	if len(selected) == 0 {
		return nil, usageError("--check/--skip: %v", doctor.ErrNoChecks)
	}
	return selected, nil
}

// applyFor rewrites the report of the cluster named cluster by the config
// (its ignore entries scoped to that cluster), the annotations and the
// baseline (its findings for that cluster, or recorded without one), then
// recounts it.
func (o *ciOptions) applyFor(r *doctor.Report, snap *snapshot.Snapshot, now time.Time, cluster string) {
	for why, names := range o.disabled {
		r.Disable(names, why)
	}
	config.Apply(o.cfg.ForCluster(cluster), r, snap, now)
	if o.cfg != nil {
		r.Config = o.cfg.Path
	}
	if o.base != nil {
		o.base.ForCluster(cluster).Apply(r)
	}
	r.Finalize()
	if !o.ShowSuppressed {
		r.Suppressed = nil
	}
}

// printOptions are what SARIF and JUnit need besides the report.
func printOptions(format string, color bool, selected []*doctor.Check, failOn doctor.Severity) report.Options {
	builtin := map[string]bool{}
	for _, c := range checks.All() {
		builtin[c.Name] = true
	}
	for _, p := range checks.Profiles() {
		for _, c := range checks.Profile(p) {
			builtin[c.Name] = true
		}
	}
	return report.Options{
		Format: format, Color: color, ToolVersion: versionString(), Checks: selected, FailOn: failOn,
		DocsURL: func(name string) string {
			if builtin[name] {
				return DocsURL + name + ".md"
			}
			return ""
		},
	}
}

// apply is applyFor a cluster without a name: ignore entries and baseline
// findings scoped to a cluster do not apply.
func (o *ciOptions) apply(r *doctor.Report, snap *snapshot.Snapshot, now time.Time) {
	o.applyFor(r, snap, now, "")
}

// writeBaseline writes --write-baseline from the report of a complete
// scan: a baseline from a partial one would call the unread problems new
// in every later scan, or worse, hide nothing while looking whole.
func (o *ciOptions) writeBaseline(r *doctor.Report) error {
	if o.WriteBaseline == "" {
		return nil
	}
	if !r.Complete {
		return fmt.Errorf("--write-baseline %s: not written: %s", o.WriteBaseline, r.IncompleteSummary())
	}
	if err := baseline.Write(o.WriteBaseline, r); err != nil {
		return fmt.Errorf("--write-baseline %s: %w", o.WriteBaseline, err)
	}
	return nil
}

// writableFile says why path cannot be written as a file (a directory, a
// parent that does not exist or is no directory), nil when it can be.
func writableFile(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: no such directory", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}
