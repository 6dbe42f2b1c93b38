package httpserver

import (
	"net/http"
	"slices"
	"strings"
)

// corsPattern collects the methods of the CORS routes of one pattern.
type corsPattern struct {
	pattern string
	methods []string
	class   RateClass
}

// addPreflight registers the OPTIONS handler of rt's pattern once and adds
// rt's method to the methods it announces.
func (s *Server) addPreflight(rt Route) {
	cp, ok := s.preflight[rt.Pattern]
	if !ok {
		cp = &corsPattern{pattern: rt.Pattern, class: rt.RateClass}
		s.preflight[rt.Pattern] = cp
		s.mux.Handle(http.MethodOptions+" "+rt.Pattern, s.preflightHandler(cp))
	}
	methods := []string{rt.Method}
	if rt.Method == http.MethodGet {
		methods = append(methods, http.MethodHead)
	}
	for _, m := range methods {
		if !slices.Contains(cp.methods, m) {
			cp.methods = append(cp.methods, m)
		}
	}
}

// preflightHandler answers CORS preflight requests of a public route: any
// origin, the route's methods and the Content-Type request header. No
// credentials are allowed, so Access-Control-Allow-Credentials is never set.
func (s *Server) preflightHandler(cp *corsPattern) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, ok := r.Context().Value(stateKey{}).(*reqState); ok {
			st.route = cp.pattern
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		if !s.allow(w, r, cp.class) {
			return
		}
		h.Set("Access-Control-Allow-Methods", strings.Join(cp.methods, ", "))
		h.Set("Access-Control-Allow-Headers", "Content-Type")
		h.Set("Allow", strings.Join(append([]string{http.MethodOptions}, cp.methods...), ", "))
		w.WriteHeader(http.StatusNoContent)
	})
}
