package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/config"
)

func nestedBelowCount() config.Check {
	return config.Check{
		Name:  "nested_below_count",
		Keys:  []string{"t.deep.nested.count", "t.count"},
		Rule:  "t.deep.nested.count must be below t.count",
		Holds: func(v *config.Values) bool { return v.Int("t.deep.nested.count") < v.Int("t.count") },
	}
}

func TestChecksRunAndNameTheirKeys(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	checks := []config.Check{nestedBelowCount()}
	require.NoError(t, r.ValidateChecks(checks))

	v, err := r.Load(nil, nil)
	require.NoError(t, err)
	require.NoError(t, v.Check(checks))

	v, err = r.Load(nil, []string{"BOTHY_T_DEEP_NESTED_COUNT=77", "BOTHY_T_COUNT=77"})
	require.NoError(t, err)
	err = v.Check(checks)
	ps := problems(t, err)
	require.Len(t, ps, 1)
	require.Equal(t, "nested_below_count", ps[0].Check)
	require.Contains(t, err.Error(), "t.deep.nested.count")
	require.Contains(t, err.Error(), "t.count")
	require.NotContains(t, err.Error(), "77")
}

func TestValidateChecksRejectsBadChecks(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	with := func(f func(*config.Check)) []config.Check { c := nestedBelowCount(); f(&c); return []config.Check{c} }
	for name, checks := range map[string][]config.Check{
		"a bad name":                    with(func(c *config.Check) { c.Name = "Nested Below" }),
		"an unknown key":                with(func(c *config.Check) { c.Keys = append(c.Keys, "t.nope") }),
		"no keys":                       with(func(c *config.Check) { c.Keys = nil }),
		"a rule that omits a key":       with(func(c *config.Check) { c.Rule = "t.count must be larger" }),
		"no function":                   with(func(c *config.Check) { c.Holds = nil }),
		"two checks with the same name": append(with(func(*config.Check) {}), nestedBelowCount()),
	} {
		require.Error(t, r.ValidateChecks(checks), name)
	}
}
