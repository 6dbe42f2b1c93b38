package api

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// plainBodies are bodies of well-behaved clients: plainDocument must find
// them plain, or the walk runs for every request again.
var plainBodies = []string{
	`{"text":"` + strings.Repeat("Alex asks Sam about example.com. ", 30) + `"}`,
	`{"url":"https://hooks.example.com/bothy/events","event_types":["message.created","message.updated"],"enable_hmac":true}`,
	` { "a" : [ 1, 2.5e3, -0, true, false, null, { "a": "x", "b": {"a": []} } ], "b": "\"quoted\" \\ \/ \n \u00e9 \u20AC" } `,
	`{"text":"a\u003cb\u0026c"}`,
	`[]`, `"x"`, `12`, `null`,
}

// defectBodies each hold one defect of walkDocument, or something only the
// walk decides; plainDocument must not find them plain.
var defectBodies = []string{
	`{"a":1,"a":2}`,
	`{"a":{"b":1,"b":2}}`,
	`[{"a":1},{"b":1,"b":1}]`,
	`{"a\u0062":1,"ab":2}`,
	`{"a":1}x`, `{"a":1} {"a":1}`, `{"a":`, ``, `{"a":1`,
	`{"a":"x\u0000y"}`, `{"a\u0000":1}`, `{"a":"\ud800"}`, `{"a":"\uDC00x"}`, `{"a":"\\u0000"}`, `{"a":"\uD834\uDD1E"}`,
	"{\"a\":\"\xff\"}",
	`{"k1":1,"k2":1,"k3":1,"k4":1,"k5":1,"k6":1,"k7":1,"k8":1,"k9":1,"k10":1,"k11":1,"k12":1,"k13":1,"k14":1,"k15":1,"k16":1,"k17":1}`,
}

// TestPlainDocumentTellsPlainBodiesFromTheOthers: the bodies of
// well-behaved clients are plain (the walk does not run for them), and a
// body with a defect, or one only the walk decides, is not.
func TestPlainDocumentTellsPlainBodiesFromTheOthers(t *testing.T) {
	t.Parallel()
	for _, body := range plainBodies {
		require.True(t, plainDocument([]byte(body)), "%s", body)
		require.Empty(t, walkDocument([]byte(body)), "%s", body)
	}
	for _, body := range defectBodies {
		require.False(t, plainDocument([]byte(body)), "%s", body)
	}
}

// FuzzPlainDocumentHidesNoDefect: whatever the body, plainDocument finds it
// plain only when the walk finds no defect in it.
func FuzzPlainDocumentHidesNoDefect(f *testing.F) {
	for _, body := range append(plainBodies, defectBodies...) {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if plainDocument(body) {
			require.Empty(t, walkDocument(body), "%q", body)
		}
	})
}

// BenchmarkCheckDocument checks the body of one posted message of about
// 1,000 bytes (the shape of `make bench-e2e`); its allocations per check
// are plainDocument's (none, without the race detector).
func BenchmarkCheckDocument(b *testing.B) {
	body := []byte(plainBodies[0])
	b.ReportAllocs()
	for b.Loop() {
		if out := checkDocument(body); out != nil {
			b.Fatal(out)
		}
	}
}
