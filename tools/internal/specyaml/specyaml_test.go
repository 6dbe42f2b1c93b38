package specyaml

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const doc = `openapi: 3.0.3
paths:
  /a:
    get: {operationId: getA}
    post: {operationId: postA}
x-webhooks:
  thing.changed:
    post: {operationId: webhookThingChanged}
components:
  parameters:
    P: {$ref: '#/components/parameters/Q'}
    Q: {name: q, in: query}
`

func TestOperationsListPathsThenWebhooks(t *testing.T) {
	t.Parallel()
	d, err := Parse([]byte(doc))
	require.NoError(t, err)
	var ids []string
	for _, op := range Operations(d, true) {
		ids = append(ids, op.ID)
	}
	require.Equal(t, []string{"getA", "postA", "webhookThingChanged"}, ids)
	require.Len(t, Operations(d, false), 2)
}

func TestResolveFollowsReferenceChains(t *testing.T) {
	t.Parallel()
	d, err := Parse([]byte(doc))
	require.NoError(t, err)
	p := Path(Root(d), "components", "parameters", "P")
	require.Equal(t, "q", Scalar(Get(Resolve(d, p), "name")))
}

func TestSplitComponentRef(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ref           string
		section, name string
		ok            bool
	}{
		{"#/components/schemas/Thing", "schemas", "Thing", true},
		{"#/components/schemas/", "", "", false},
		{"#/components//Thing", "", "", false},
		{"#/components/schemas/A/b", "", "", false},
		{"other.yaml#/components/schemas/A", "", "", false},
		{"#/paths/~1a", "", "", false},
	}
	for _, tc := range cases {
		section, name, ok := SplitComponentRef(tc.ref)
		require.Equal(t, tc.ok, ok, tc.ref)
		require.Equal(t, tc.section, section, tc.ref)
		require.Equal(t, tc.name, name, tc.ref)
	}
}

func TestEditingHelpers(t *testing.T) {
	t.Parallel()
	d, err := Parse([]byte("a: 1\nb: [x, y]\n"))
	require.NoError(t, err)
	root := Root(d)
	c := DeepCopy(root)
	Set(root, "a", Get(root, "b"))
	Set(root, "c", Get(c, "a"))
	Delete(root, "b")
	require.Equal(t, []string{"x", "y"}, Strings(Get(root, "a")))
	require.Equal(t, "1", Scalar(Get(root, "c")))
	require.Nil(t, Get(root, "b"))
	require.Equal(t, "1", Scalar(Get(c, "a")), "the copy is independent")
	_, err = Parse([]byte("- not a mapping\n"))
	require.Error(t, err)
}
