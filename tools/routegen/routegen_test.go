package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func testInputs(t *testing.T, registry string) Inputs {
	t.Helper()
	return Inputs{
		Spec:     readFile(t, "testdata/spec.yaml"),
		Registry: []byte(registry),
		Config:   readFile(t, "testdata/codegen.yaml"),
	}
}

func TestParseRegistry(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		yaml    string
		wantErr string
	}{
		{name: "sorted lists with milestones and tickets pass", yaml: "enabled: [a, b]\nlater:\n  - operationId: c\n    milestone: M2\n    ticket: M2-26\n  - operationId: d\n    milestone: M1\n"},
		{name: "empty lists pass", yaml: "enabled: []\nlater: []\n"},
		{name: "an unknown key fails", yaml: "enabled: []\nlater:\n  - operationId: a\n    milestone: M1\n    owner: Robin\n", wantErr: "field owner not found"},
		{name: "an unsorted enabled list fails", yaml: "enabled: [b, a]\n", wantErr: "enabled is not sorted"},
		{name: "an unsorted later list fails", yaml: "later:\n  - {operationId: b, milestone: M1}\n  - {operationId: a, milestone: M1}\n", wantErr: "later is not sorted"},
		{name: "an operation in both lists fails", yaml: "enabled: [a]\nlater:\n  - {operationId: a, milestone: M1}\n", wantErr: "a is listed more than once"},
		{name: "a later entry without milestone fails", yaml: "later:\n  - {operationId: a}\n", wantErr: "a: milestone \"\" is not of the form M<n>"},
		{name: "a malformed ticket fails", yaml: "later:\n  - {operationId: a, milestone: M2, ticket: webhooks}\n", wantErr: "ticket \"webhooks\" is not of the form"},
		{name: "a ticket of another milestone fails", yaml: "later:\n  - {operationId: a, milestone: M1, ticket: M2-26}\n", wantErr: "ticket M2-26 is not in milestone M1"},
		{name: "an entry without operationId fails", yaml: "later:\n  - {milestone: M1}\n", wantErr: "an entry has no operationId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseRegistry([]byte(tc.yaml))
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestRegistryMustListEverySpecOperationOnce(t *testing.T) {
	t.Parallel()
	r, err := ParseRegistry([]byte("enabled: [a, z]\nlater:\n  - {operationId: b, milestone: M1}\n"))
	require.NoError(t, err)
	require.NoError(t, r.CheckAgainst([]string{"a", "b", "z"}))
	err = r.CheckAgainst([]string{"a", "b", "c", "d"})
	require.EqualError(t, err, "not listed in operations.yaml: c, d; listed in operations.yaml but not in the spec: z")
}

func TestFilterKeepsEnabledOperationsAndWhatTheyReference(t *testing.T) {
	t.Parallel()
	doc, err := ParseSpec(readFile(t, "testdata/spec.yaml"))
	require.NoError(t, err)
	out, err := Filter(doc, map[string]bool{"updateThing": true})
	require.NoError(t, err)
	var got map[string]any
	b, err := Encode(out, "")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, &got))

	paths := got["paths"].(map[string]any)
	require.Len(t, paths, 1)
	item := paths["/things/{thingId}"].(map[string]any)
	require.Contains(t, item, "patch")
	require.NotContains(t, item, "get", "getThing is not enabled")
	require.Contains(t, item, "parameters", "path-level parameters stay")

	components := got["components"].(map[string]any)
	require.ElementsMatch(t, []string{"Id", "Thing", "Colour", "ThingUpdate", "Problem", "Envelope"}, keys(components["schemas"]),
		"transitive references from the operation and from x-webhooks stay; Other and OtherList go")
	require.ElementsMatch(t, []string{"ThingId", "IdempotencyKey"}, keys(components["parameters"]))
	require.ElementsMatch(t, []string{"BadRequest"}, keys(components["responses"]))
	require.ElementsMatch(t, []string{"bearerAuth"}, keys(components["securitySchemes"]),
		"the root security stays; otherAuth was only used by listOthers")
	require.Contains(t, got, "x-webhooks")
	var tags []string
	for _, tg := range got["tags"].([]any) {
		tags = append(tags, tg.(map[string]any)["name"].(string))
	}
	require.Equal(t, []string{"Things", "Events"}, tags)

	// The source document is untouched.
	again, err := Operations(doc)
	require.NoError(t, err)
	require.Len(t, again, 3)
}

func TestFilterWithNothingEnabledKeepsAValidDocument(t *testing.T) {
	t.Parallel()
	doc, err := ParseSpec(readFile(t, "testdata/spec.yaml"))
	require.NoError(t, err)
	out, err := Filter(doc, map[string]bool{})
	require.NoError(t, err)
	b, err := Encode(out, "")
	require.NoError(t, err)
	require.Contains(t, string(b), "paths: {}")
	var got map[string]any
	require.NoError(t, yaml.Unmarshal(b, &got))
	require.ElementsMatch(t, []string{"Id", "Envelope"}, keys(got["components"].(map[string]any)["schemas"]))
}

func TestFilterRefusesForeignReferences(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"a reference to another file fails": "other.yaml#/components/schemas/X",
		"a reference to nothing fails":      "#/components/schemas/Missing",
		"a reference outside components":    "#/paths/~1things",
	}
	for name, ref := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: a\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema:\n                $ref: '" + ref + "'\ncomponents:\n  schemas: {}\n"
			doc, err := ParseSpec([]byte(spec))
			require.NoError(t, err)
			_, err = Filter(doc, map[string]bool{"a": true})
			require.Error(t, err)
		})
	}
}

func TestOperationsNeedUniqueOperationIDs(t *testing.T) {
	t.Parallel()
	doc, err := ParseSpec([]byte("openapi: 3.0.3\npaths:\n  /a:\n    get: {operationId: x}\n    put: {operationId: x}\n"))
	require.NoError(t, err)
	_, err = Operations(doc)
	require.EqualError(t, err, "spec: operationId x is used twice")
	doc, err = ParseSpec([]byte("openapi: 3.0.3\npaths:\n  /a:\n    get: {summary: nameless}\n"))
	require.NoError(t, err)
	_, err = Operations(doc)
	require.EqualError(t, err, "spec: GET /a has no operationId")
}

func TestGenerateWritesTheOperationTable(t *testing.T) {
	t.Parallel()
	files, err := Generate(testInputs(t, "enabled: [getThing, updateThing]\nlater:\n  - {operationId: listOthers, milestone: M2}\n"))
	require.NoError(t, err)
	table := string(files[operationsFile])
	require.Contains(t, table, "package things")
	require.Contains(t, table, `const BasePath = "/api/v1"`)
	want := []string{
		`ID:             "getThing",
		Handler:        "GetThing",
		Method:         "GET",
		Path:           "/things/{thingId}",
		Action:         "thing.read",
		RateLimitClass: "rl.public_auth",
		CORS:           true,
		Public:         true,
		Idempotent:     false,`,
		`ID:             "updateThing",
		Handler:        "UpdateThing",
		Method:         "PATCH",
		Path:           "/things/{thingId}",
		Action:         "thing.manage",
		RateLimitClass: "",
		CORS:           false,
		Public:         false,
		Idempotent:     true,`,
	}
	for _, w := range want {
		require.Contains(t, table, w)
	}
	require.Less(t, strings.Index(table, `"getThing"`), strings.Index(table, `"updateThing"`), "rows are sorted by ID")

	server := string(files[serverFile])
	require.Contains(t, server, "GetThing(ctx context.Context, request GetThingRequestObject)")
	require.Contains(t, server, "UpdateThing(ctx context.Context, request UpdateThingRequestObject)")
	require.NotContains(t, server, "ListOthers")
	require.Contains(t, server, "// Code generated by tools/routegen with oapi-codegen "+oapiCodegenVersion)
	for name, src := range files {
		if strings.HasSuffix(name, ".go") {
			_, err := parser.ParseFile(token.NewFileSet(), name, src, parser.AllErrors)
			require.NoError(t, err, name)
		}
	}
	require.True(t, strings.HasPrefix(string(files[specFile]), "# "+generatedBy+"\n"))
}

func TestGenerateFailsOnContractDefects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		registry string
		spec     func(string) string
		wantErr  string
	}{
		{
			name:     "an operation missing from operations.yaml",
			registry: "enabled: [getThing]\n",
			wantErr:  "not listed in operations.yaml: listOthers, updateThing",
		},
		{
			name:     "an enabled operation without x-authz-action",
			registry: "enabled: [getThing, listOthers, updateThing]\n",
			spec:     func(s string) string { return strings.Replace(s, "      x-authz-action: thing.read\n", "", 1) },
			wantErr:  "getThing: x-authz-action is missing",
		},
		{
			name:     "x-cors that is not a boolean",
			registry: "enabled: [getThing, listOthers, updateThing]\n",
			spec:     func(s string) string { return strings.Replace(s, "x-cors: true", "x-cors: 'yes'", 1) },
			wantErr:  "getThing: x-cors is not a boolean",
		},
		{
			name:     "a server URL that is not a path",
			registry: "enabled: [getThing, listOthers, updateThing]\n",
			spec: func(s string) string {
				return strings.Replace(s, "url: /api/v1", "url: https://chat.example.com/api/v1", 1)
			},
			wantErr: "is not a path like /api/v1",
		},
		{
			name:     "an invalid filtered spec",
			registry: "enabled: [getThing, listOthers, updateThing]\n",
			spec:     func(s string) string { return strings.Replace(s, "version: 1.0.0", "version: [1]", 1) },
			wantErr:  "filtered spec",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := testInputs(t, tc.registry)
			if tc.spec != nil {
				in.Spec = []byte(tc.spec(string(in.Spec)))
			}
			_, err := Generate(in)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// TestGenerateIsDeterministic runs the real inputs twice, with nothing and
// with everything enabled: the bytes must not change between runs.
func TestGenerateIsDeterministic(t *testing.T) {
	t.Parallel()
	real := Inputs{
		Spec:     readFile(t, "../../api/openapi.yaml"),
		Registry: readFile(t, "../../services/server/api/operations.yaml"),
		Config:   readFile(t, "../../services/server/api/codegen.yaml"),
	}
	reg, err := ParseRegistry(real.Registry)
	require.NoError(t, err)
	all := "enabled:\n"
	for _, id := range sortedIDs(reg) {
		all += "  - " + id + "\n"
	}
	everything := real
	everything.Registry = []byte(all)
	for _, in := range []Inputs{real, everything} {
		first, err := Generate(in)
		require.NoError(t, err)
		second, err := Generate(in)
		require.NoError(t, err)
		require.Equal(t, first, second)
	}
}

func TestPinnedOapiCodegenVersionMatchesGoMod(t *testing.T) {
	t.Parallel()
	mod := string(readFile(t, filepath.Join("..", "go.mod")))
	require.Contains(t, mod, "github.com/oapi-codegen/oapi-codegen/v2 "+oapiCodegenVersion)
}

func keys(m any) []string {
	var out []string
	for k := range m.(map[string]any) {
		out = append(out, k)
	}
	return out
}
