package httpserver

import (
	"net/http"
	"strings"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
)

// authenticate resolves the principal of r: no Authorization header is the
// anonymous principal; "Bearer <token>" goes to the Authenticator; anything
// else (another scheme, a malformed token, two headers) and a token that
// resolves to nobody answer 401 unauthorized. It reports false when it
// answered.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (actor.Principal, bool) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return actor.Principal{}, true
	}
	token, ok := bearerToken(values)
	if !ok {
		s.WriteError(w, r, unauthorized())
		return actor.Principal{}, false
	}
	p, err := s.auth.Authenticate(r.Context(), token)
	if err != nil {
		s.WriteError(w, r, err)
		return actor.Principal{}, false
	}
	if p.Anonymous() {
		s.WriteError(w, r, unauthorized())
		return actor.Principal{}, false
	}
	return p, true
}

// bearerToken returns the token of a single "Bearer <token68>" header
// (RFC 6750 2.1; the scheme is case-insensitive).
func bearerToken(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || !token68(token) {
		return "", false
	}
	return token, true
}

// token68 reports whether t has the token68 form of RFC 9110 11.2:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func token68(t string) bool {
	i := 0
	for i < len(t) {
		c := t[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' {
			i++
			continue
		}
		break
	}
	if i == 0 {
		return false
	}
	for ; i < len(t); i++ {
		if t[i] != '=' {
			return false
		}
	}
	return true
}

func unauthorized() *errs.Error {
	return errs.New(errs.CodeUnauthorized, "authentication required")
}
