package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"sort"
)

// sqlMethods are the pgx methods that run a statement the caller wrote
// (pg.DBTX, pgx.Tx, *pgxpool.Pool, *pgxpool.Conn). A call of one of them
// with a context and at least one more argument is inline SQL.
var sqlMethods = map[string]bool{"Exec": true, "Query": true, "QueryRow": true, "SendBatch": true, "CopyFrom": true}

// allFuncs in an inline_sql entry allows every function of the package.
const allFuncs = "*"

// sqlSite is one call of a pgx method in a package's production code.
type sqlSite struct {
	pos    string // file relative to the Go module, and line
	fn     string // Type.Method or Func; "" at package level
	method string
}

// CheckSQL enforces ADR 0078 over the production code of the business
// modules (kind module, test harnesses excluded): a statement runs through
// the sqlc package beside its adapter, and the only functions that call
// pgx with SQL of their own are those inline_sql lists. Generated files
// are not read. An entry of inline_sql that names no package, or a
// function that runs no inline SQL, is a violation too, so the list stays
// the exact list of places the ADR explains. The error is for a file that
// cannot be read or parsed.
func (c *Config) CheckSQL(pkgs []Package) ([]Violation, error) {
	var out []Violation
	seen := map[string]bool{}    // relative package paths
	used := map[[2]string]bool{} // (package, listed function) that ran SQL
	for _, p := range pkgs {
		rel, ok := c.relative(p.ImportPath)
		if !ok {
			continue
		}
		seen[rel] = true
		if pl, found := c.locate(rel); !found || pl.mod.Kind != KindModule || c.isTestOnly(rel) {
			continue
		}
		sites, err := sqlSites(rel, p)
		if err != nil {
			return nil, err
		}
		allowed := c.InlineSQL[rel]
		for _, s := range sites {
			switch {
			case contains(allowed, allFuncs):
				used[[2]string{rel, allFuncs}] = true
			case s.fn != "" && contains(allowed, s.fn):
				used[[2]string{rel, s.fn}] = true
			default:
				fn := s.fn
				if fn == "" {
					fn = "a package-level declaration"
				}
				out = append(out, Violation{From: s.pos, Rule: fmt.Sprintf(
					"%s runs inline SQL (%s): put the statement in a sqlc query (queries/*.sql beside the adapter), "+
						"or list the function under inline_sql in architecture/modules.yaml with its reason in ADR 0078", fn, s.method)})
			}
		}
	}
	for rel, funcs := range c.InlineSQL {
		if !seen[rel] {
			out = append(out, Violation{From: "architecture/modules.yaml", Rule: fmt.Sprintf("inline_sql lists %s, which is no package of the module", rel)})
			continue
		}
		for _, fn := range funcs {
			if !used[[2]string{rel, fn}] {
				name := fn
				if fn == allFuncs {
					name = `"*"`
				}
				out = append(out, Violation{From: "architecture/modules.yaml", Rule: fmt.Sprintf("inline_sql lists %s %s, which runs no inline SQL: remove the entry", rel, name)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// sqlSites parses the production files of p and returns its pgx calls.
func sqlSites(rel string, p Package) ([]sqlSite, error) {
	var out []sqlSite
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("inline SQL check: %w", err)
		}
		if ast.IsGenerated(f) {
			continue
		}
		for _, decl := range f.Decls {
			fn := ""
			if d, ok := decl.(*ast.FuncDecl); ok {
				fn = funcName(d)
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) < 2 {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sqlMethods[sel.Sel.Name] {
					line := fset.Position(call.Pos()).Line
					out = append(out, sqlSite{pos: fmt.Sprintf("%s:%d", path.Join(rel, name), line), fn: fn, method: sel.Sel.Name})
				}
				return true
			})
		}
	}
	return out, nil
}

// funcName is Type.Method for a method (pointer or not, type parameters
// dropped) and the name for a function.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
