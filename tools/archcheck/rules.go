package main

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Kinds of modules in modules.yaml.
const (
	KindModule   = "module"
	KindShared   = "shared"
	KindAssembly = "assembly"
)

// Config is services/server/architecture/modules.yaml.
type Config struct {
	// Module is the Go module path, for example bothy/server.
	Module string `yaml:"module"`
	// TestOnly are globs over relative package paths (each also matching
	// subpackages) of packages only tests and test-only packages import.
	TestOnly []string `yaml:"test_only"`
	// DomainLibraries are the third-party import paths (each also matching
	// the packages below it) that domain packages may import besides the
	// standard library: pure computation without I/O, such as
	// golang.org/x/crypto. Ports stay limited to the standard library.
	DomainLibraries []string `yaml:"domain_libraries"`
	// Modules maps a module name to its rules.
	Modules map[string]*Module `yaml:"modules"`
	// InlineSQL maps a relative package path of a business module to the
	// functions (Type.Method or Func, or "*" for all of them) that may run
	// SQL written in Go instead of a sqlc query (ADR 0078, CheckSQL).
	InlineSQL map[string][]string `yaml:"inline_sql"`
}

// Module is one module of modules.yaml.
type Module struct {
	// Path is the module's folder relative to the Go module root.
	Path string `yaml:"path"`
	// Kind is module (default), shared or assembly.
	Kind string `yaml:"kind"`
	// Uses lists the modules this one may import.
	Uses []string `yaml:"uses"`
	// Importers, when set, restricts who may import this module: globs over
	// relative package paths, each also matching subpackages.
	Importers []string `yaml:"importers"`
	// Inside lists imports between the module's own packages that its
	// layout forbids beyond the layer rules, each with its reason.
	Inside []InsideRule `yaml:"inside"`

	name string
}

// InsideRule forbids one package of a module to import others of the same
// module.
type InsideRule struct {
	// Package is the relative path of the importing package (that package
	// only, not its subpackages).
	Package string `yaml:"package"`
	// Never are relative paths of packages it must not import, each also
	// matching its subpackages.
	Never []string `yaml:"never"`
	// Why names the reason and the document that holds it.
	Why string `yaml:"why"`
}

// ParseConfig reads and validates modules.yaml.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("modules.yaml: %w", err)
	}
	if c.Module == "" || len(c.Modules) == 0 {
		return nil, fmt.Errorf("modules.yaml: module and modules are required")
	}
	for _, lib := range c.DomainLibraries {
		if _, inModule := c.relative(lib); inModule || isStd(lib) || strings.HasSuffix(lib, "/") {
			return nil, fmt.Errorf("modules.yaml: domain_libraries entry %q is no third-party import path", lib)
		}
	}
	for rel, funcs := range c.InlineSQL {
		switch {
		case len(funcs) == 0:
			return nil, fmt.Errorf("modules.yaml: inline_sql entry %s lists no function", rel)
		case len(funcs) > 1 && contains(funcs, allFuncs):
			return nil, fmt.Errorf("modules.yaml: inline_sql entry %s lists \"*\" beside functions", rel)
		}
	}
	paths := map[string]string{}
	for name, m := range c.Modules {
		m.name = name
		if m.Kind == "" {
			m.Kind = KindModule
		}
		switch m.Kind {
		case KindModule, KindShared, KindAssembly:
		default:
			return nil, fmt.Errorf("modules.yaml: module %s has the unknown kind %q", name, m.Kind)
		}
		if m.Path == "" {
			return nil, fmt.Errorf("modules.yaml: module %s has no path", name)
		}
		if other, dup := paths[m.Path]; dup {
			return nil, fmt.Errorf("modules.yaml: modules %s and %s share the path %s", other, name, m.Path)
		}
		paths[m.Path] = name
		for _, u := range m.Uses {
			if _, ok := c.Modules[u]; !ok {
				return nil, fmt.Errorf("modules.yaml: module %s uses the unknown module %s", name, u)
			}
		}
		for _, r := range m.Inside {
			if r.Why == "" || len(r.Never) == 0 || !within(r.Package, m.Path) {
				return nil, fmt.Errorf("modules.yaml: an inside rule of module %s needs a package inside %s, never and why", name, m.Path)
			}
			for _, n := range r.Never {
				if !within(n, m.Path) {
					return nil, fmt.Errorf("modules.yaml: the inside rule of %s names %s, which is not inside module %s", r.Package, n, name)
				}
			}
		}
	}
	return &c, nil
}

// Package is what archcheck needs of `go list -json`.
type Package struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	// Dir and GoFiles (names in Dir, tests excluded) are read by CheckSQL.
	Dir     string
	GoFiles []string
	Error   *struct{ Err string }
}

// Violation is one import that breaks a rule, or (To empty) one place
// that breaks a rule of CheckSQL.
type Violation struct {
	// From and To are the importing and the imported package (relative
	// paths inside the Go module when they are in it); for CheckSQL, From
	// is the file and line, or architecture/modules.yaml, and To is empty.
	From, To string
	// Test is set when only the tests import it.
	Test bool
	// Rule explains the rule that is broken.
	Rule string
}

// String formats the violation for the developer.
func (v Violation) String() string {
	if v.To == "" {
		return v.From + ": " + v.Rule
	}
	t := ""
	if v.Test {
		t = " (in tests)"
	}
	return fmt.Sprintf("%s imports %s%s: %s", v.From, v.To, t, v.Rule)
}

// place is where a package sits: its module and its part inside it.
type place struct {
	mod  *Module
	rel  string // path relative to the Go module
	part string // for kind module: "port", "domain", "app", "adapters", "other"
}

// locate finds the module of a relative package path (longest path prefix).
func (c *Config) locate(rel string) (place, bool) {
	var best *Module
	for _, m := range c.Modules {
		if (rel == m.Path || strings.HasPrefix(rel, m.Path+"/")) && (best == nil || len(m.Path) > len(best.Path)) {
			best = m
		}
	}
	if best == nil {
		return place{rel: rel}, false
	}
	p := place{mod: best, rel: rel}
	if best.Kind == KindModule {
		sub := strings.TrimPrefix(strings.TrimPrefix(rel, best.Path), "/")
		switch first, _, _ := strings.Cut(sub, "/"); first {
		case "":
			p.part = "port"
		case "domain", "app", "adapters":
			p.part = first
		default:
			p.part = "other"
		}
	}
	return p, true
}

// Check applies the rules to the packages and returns the violations,
// sorted.
func (c *Config) Check(pkgs []Package) []Violation {
	var out []Violation
	for _, p := range pkgs {
		rel, ok := c.relative(p.ImportPath)
		if !ok {
			continue
		}
		from, found := c.locate(rel)
		if !found {
			out = append(out, Violation{From: rel, To: "-", Rule: "the package belongs to no module of architecture/modules.yaml; add it there"})
			continue
		}
		for _, imp := range p.Imports {
			if v, bad := c.checkImport(from, imp); bad {
				out = append(out, v)
			}
		}
		// Tests may import any package (they assemble real parts), but
		// only packages that belong to a module.
		for _, imp := range append(append([]string{}, p.TestImports...), p.XTestImports...) {
			if rel, in := c.relative(imp); in {
				if _, found := c.locate(rel); !found {
					out = append(out, Violation{From: from.rel, To: rel, Test: true, Rule: "the imported package belongs to no module of architecture/modules.yaml"})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// relative returns the path of an import inside the Go module.
func (c *Config) relative(imp string) (string, bool) {
	if imp == c.Module {
		return "", true
	}
	rel, ok := strings.CutPrefix(imp, c.Module+"/")
	return rel, ok
}

// isStd reports whether an import path is in the standard library: its
// first element has no dot.
func isStd(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

// checkImport applies the rules to one production import of a package at
// from.
func (c *Config) checkImport(from place, imp string) (Violation, bool) {
	v := Violation{From: from.rel, To: imp}
	bad := func(format string, args ...any) (Violation, bool) {
		v.Rule = fmt.Sprintf(format, args...)
		return v, true
	}
	rel, inModule := c.relative(imp)
	// Domain and port packages are limited to the standard library and
	// the kernel, third-party libraries included.
	limited := from.mod.Kind == KindModule && (from.part == "domain" || from.part == "port")
	if !inModule {
		if isStd(imp) || !limited || from.part == "domain" && c.isDomainLibrary(imp) {
			return v, false
		}
		if from.part == "domain" {
			return bad("domain packages of a module import only the standard library, internal/kernel and the domain_libraries of architecture/modules.yaml")
		}
		return bad("%s packages of a module import only the standard library and internal/kernel", partName(from))
	}
	v.To = rel
	to, found := c.locate(rel)
	if !found {
		return bad("the imported package belongs to no module of architecture/modules.yaml")
	}
	if c.isTestOnly(rel) && !c.isTestOnly(from.rel) {
		return bad("%s is a test harness, for tests only", rel)
	}
	if to.mod != from.mod && len(to.mod.Importers) > 0 && !matchesAny(from.rel, to.mod.Importers) {
		return bad("only %s may import module %s", strings.Join(to.mod.Importers, ", "), to.mod.name)
	}
	if from.mod.Kind == KindAssembly || c.isTestOnly(from.rel) {
		return v, false
	}
	if to.mod == from.mod {
		for _, r := range from.mod.Inside {
			if r.Package != from.rel {
				continue
			}
			for _, n := range r.Never {
				if within(rel, n) {
					return bad("%s never imports %s: %s", r.Package, n, r.Why)
				}
			}
		}
		return c.checkInside(from, to, v)
	}
	if from.mod.name == "kernel" {
		return bad("kernel imports nothing of platform or the modules")
	}
	if limited && to.mod.name != "kernel" && (from.part != "port" || to.mod.Kind != KindModule || to.part != "port") {
		return bad("%s packages import only the standard library and internal/kernel", partName(from))
	}
	switch {
	case to.mod.Kind == KindAssembly:
		return bad("no package imports the assembly module %s", to.mod.name)
	case from.mod.Kind == KindShared && !uses(from.mod, to.mod.name):
		return bad("module %s may import only %s", from.mod.name, listOrNothing(from.mod.Uses))
	case from.mod.Kind == KindModule && (to.mod.name == "kernel" || to.mod.name == "platform"):
		return v, false
	case to.mod.Kind == KindModule && from.mod.Kind == KindModule && !uses(from.mod, to.mod.name):
		return bad("module %s may use %s; %s is not among them (architecture/modules.yaml)", from.mod.name, listOrNothing(from.mod.Uses), to.mod.name)
	case to.mod.Kind == KindModule && to.part != "port":
		return bad("a module reaches %s only through its port %s, never %s/%s", to.mod.name, to.mod.Path, to.mod.Path, to.part)
	case to.mod.Kind == KindShared && from.mod.Kind == KindModule && !uses(from.mod, to.mod.name) && len(to.mod.Importers) == 0:
		return bad("module %s does not list %s under uses", from.mod.name, to.mod.name)
	}
	return v, false
}

// checkInside applies the layer rules inside one business module.
func (c *Config) checkInside(from, to place, v Violation) (Violation, bool) {
	switch {
	case from.part == "domain" && to.part != "domain" && to.part != "port":
		v.Rule = "domain packages import only the standard library, internal/kernel, their port and their domain"
		return v, true
	case from.part == "port" && to.part != "port":
		v.Rule = "the port imports only the standard library, internal/kernel and other ports"
		return v, true
	case from.part == "app" && to.part == "adapters":
		v.Rule = "use cases (app) never import adapters; define an outgoing port in app instead"
		return v, true
	}
	return v, false
}

// within reports whether the relative path rel is dir or below it.
func within(rel, dir string) bool {
	return rel == dir || strings.HasPrefix(rel, dir+"/")
}

// isDomainLibrary reports whether imp is a domain library or a package
// below one.
func (c *Config) isDomainLibrary(imp string) bool {
	for _, lib := range c.DomainLibraries {
		if imp == lib || strings.HasPrefix(imp, lib+"/") {
			return true
		}
	}
	return false
}

func (c *Config) isTestOnly(rel string) bool {
	return matchesAny(rel, c.TestOnly)
}

// matchesAny reports whether rel or one of its parents matches a glob.
func matchesAny(rel string, globs []string) bool {
	for p := rel; p != "." && p != ""; p = path.Dir(p) {
		for _, g := range globs {
			if ok, _ := path.Match(g, p); ok {
				return true
			}
		}
	}
	return false
}

func uses(m *Module, name string) bool {
	for _, u := range m.Uses {
		if u == name {
			return true
		}
	}
	return false
}

func partName(p place) string { return p.part }

func listOrNothing(s []string) string {
	if len(s) == 0 {
		return "no other module"
	}
	return strings.Join(s, ", ")
}
